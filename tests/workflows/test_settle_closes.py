"""The settle-closes shape (ADR 0057): an approved run's send records the run's end with the
receipt's final settle, so the run ends with no local activity after the send, and what
PostgreSQL holds is what a quiet-shape run (which records its end itself) leaves."""

from __future__ import annotations

from typing import Any, Literal

import asyncpg
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from contracts import EventState, FinalOutcome
from contracts.events import QUIET_SHAPE, SETTLE_CLOSES_SHAPE
from tests.conftest import Handle, signed_event, start
from tests.workflows.review_helpers import approve, new_customer
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
