"""ProcessEventWorkflow on the time-skipping test server with the real activities, real
PostgreSQL and the stand-in targets: days of review SLA pass in seconds."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import asyncpg
from temporalio.client import Client

from contracts import EventState, ReviewDecision
from tests.conftest import signed_event, start, wait_review
from tests.edge import send_decision
from tollgate.dev.standins import StandIns


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
    # Sent as an edge sends them: the validator refuses, the edge audits (tests.edge).
    wrong_role = await send_decision(handle, ReviewDecision(
        decision="approve", role="intern", **good), database_url=database_url)
    assert (wrong_role.accepted, wrong_role.reason_code) == (False, "role_not_allowed")
    self_approval = await send_decision(handle, ReviewDecision(
        decision="approve", role="care_lead", **{**good, "reviewer": "crm-scheduler"}),
        database_url=database_url)
    assert (self_approval.accepted, self_approval.reason_code) == (
        False, "separation_of_duties")
    assert await handle.query("state") == EventState.AWAITING_REVIEW
    rejected = await send_decision(handle, ReviewDecision(
        decision="reject", role="care_lead", **good), database_url=database_url)
    assert rejected.accepted is True
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
