"""The settle-closes shape (ADR 0057): an approved run's send records the run's end with the
receipt's final settle, so the run ends with no local activity after the send, and what
PostgreSQL holds is what a quiet-shape run (which records its end itself) leaves."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import asyncpg
import pytest
from temporalio import activity
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.exceptions import ApplicationError
from temporalio.testing import WorkflowEnvironment

from activities.execute import ExecuteActivities
from contracts import EventState, ExecuteRequest, ExecuteResult, FinalOutcome
from contracts.events import QUIET_SHAPE, SETTLE_CLOSES_SHAPE
from tests.cli.helpers import run_ops
from tests.conftest import Handle, signed_event, start, worker_settings
from tests.workflows.review_helpers import approve, new_customer, sent_to
from tollgate.dev.standins import StandIns


async def approved(client: Client, queue: str, standins: StandIns,
                   shape: Literal[2, 3]) -> tuple[Handle, FinalOutcome]:
    handle = await start(client, queue, signed_event(new_customer(standins)), shape=shape)
    await approve(handle, reason="fine")
    outcome = await handle.result()
    assert isinstance(outcome, FinalOutcome) and outcome.state == EventState.SUCCEEDED
    return handle, outcome


async def recorded(database_url: str, workflow_id: str) -> dict[str, Any]:
    conn = await asyncpg.connect(database_url)
    try:
        row = await conn.fetchrow(
            "SELECT state, last_seq, reason_code, receipt_key, outcome FROM events"
            " WHERE workflow_id = $1", workflow_id)
        steps = [tuple(r) for r in await conn.fetch(
            "SELECT seq, from_state, to_state, actor, reason FROM state_transitions"
            " WHERE workflow_id = $1 ORDER BY seq", workflow_id)]
    finally:
        await conn.close()
    assert row is not None
    return {**dict(row), "outcome": FinalOutcome.model_validate_json(row["outcome"]),
            "steps": steps}


async def local_activities(handle: Handle) -> int:
    return len([e async for e in handle.fetch_history_events()
                if e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED])


async def test_the_send_records_the_end_as_the_run_would_have(
    worker_client: tuple[Client, str], database_url: str, standins: StandIns,
) -> None:
    client, queue = worker_client
    closes, closes_outcome = await approved(client, queue, standins, SETTLE_CLOSES_SHAPE)
    quiet, quiet_outcome = await approved(client, queue, standins, QUIET_SHAPE)
    # Validation, gate with review, approval with the mint: no fourth for the end.
    assert (await local_activities(closes), await local_activities(quiet)) == (3, 4)

    got, before = (await recorded(database_url, closes.id),
                   await recorded(database_url, quiet.id))
    # The same numbered transitions, states, actors and reasons; the end by the workflow.
    assert [s[1:] for s in got["steps"]] == [s[1:] for s in before["steps"]]
    assert [s[0] for s in got["steps"]] == [s[0] for s in before["steps"]]
    assert got["steps"][-1][1:4] == ("EXECUTING", "SUCCEEDED", "workflow")
    for key in ("state", "last_seq", "reason_code"):
        assert got[key] == before[key], key
    assert got["receipt_key"] == got["outcome"].receipt.action_key
    # The row's outcome is the one the run returned, receipt included.
    assert got["outcome"] == closes_outcome and before["outcome"] == quiet_outcome
    assert closes_outcome.receipt is not None and closes_outcome.receipt.status == "SUCCEEDED"


async def test_a_send_whose_answer_was_lost_after_it_recorded_the_end_ends_once(
    worker_client: tuple[Client, str], env: WorkflowEnvironment, database_url: str,
    standins: StandIns, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The send's first attempt settles the receipt and records the run's end, then its answer
    never reaches the server (here: the attempt fails after its work, as a worker killed at that
    point would leave it). The retry finds the receipt final and answers ``already_sent``
    without the end; the run records the end itself under the same number (ADR 0057), which
    the step statement keeps as a new version of that transition. One message, SUCCEEDED, and
    the audit chain still verifies."""
    real = ExecuteActivities._execute

    async def answer_lost(self: ExecuteActivities, request: ExecuteRequest) -> ExecuteResult:
        result = await real(self, request)
        if activity.info().attempt == 1 and result.closed_seq is not None:
            raise ApplicationError("the attempt's answer was lost")
        return result

    monkeypatch.setattr(ExecuteActivities, "_execute", answer_lost)
    client, queue = worker_client
    customer = new_customer(standins)
    handle = await start(client, queue, signed_event(customer))
    await approve(handle, reason="fine")
    outcome = await handle.result()
    assert (outcome.state, outcome.reason_code) == (EventState.SUCCEEDED, "already_sent")
    assert sent_to(standins, customer) == 1

    got = await recorded(database_url, handle.id)
    assert got["steps"][-1][1:] == ("EXECUTING", "SUCCEEDED", "workflow", "already_sent")
    assert got["state"] == "SUCCEEDED" and got["reason_code"] == "already_sent"
    assert got["outcome"] == outcome
    conn = await asyncpg.connect(database_url)
    try:
        # The end was chained twice: recorded with the settle, then rewritten by the run.
        versions = await conn.fetchval(
            "SELECT count(*) FROM audit_chain WHERE workflow_id = $1"
            " AND source = 'state_transitions' AND row_key = $2",
            handle.id, str(got["last_seq"]))
        receipts = await conn.fetchval(
            "SELECT count(*) FROM receipts WHERE workflow_id = $1 AND status = 'SUCCEEDED'",
            handle.id)
    finally:
        await conn.close()
    assert (versions, receipts) == (2, 1)
    settings = worker_settings(database_url, standins, tmp_path, queue,
                               TEMPORAL_ADDRESS=env.client.service_client.config.target_host)
    capsys.readouterr()
    assert await run_ops(["audit", "--verify", "--tenant", "acme"], settings) == 0
    assert "chain(s) checked: intact" in capsys.readouterr().out
