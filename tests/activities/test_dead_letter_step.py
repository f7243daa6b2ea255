"""A send step that failed for good before it recorded its APPROVED -> EXECUTING (refused, or
its retries spent before the receipt) has it written with its dead letter, under the number the
run gave it, so the DEAD_LETTERED the run records next has no gap before it. Real PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import pytest

from activities.dead_letters import DeadLetterActivities
from adapters.postgres.ops import OpsStore
from adapters.postgres.pool import create_pool
from adapters.postgres.store import PostgresStore
from contracts import ActionRequest, EventRef, EventState, StepFailure, StepRecord, Transition
from tests.conftest import fresh_key

ROWS_SQL = ("SELECT seq, from_state, to_state, actor, reason FROM state_transitions"
            " WHERE workflow_id = $1 ORDER BY seq")


@pytest.fixture
async def pool(database_url: str) -> AsyncIterator[asyncpg.Pool]:
    pool = await create_pool(database_url, max_size=2)
    yield pool
    await pool.close()


def send_failure(code: str, seq: int | None = 7) -> StepFailure:
    event_id = fresh_key("evt")
    ref = EventRef(workflow_id=f"event/acme/{event_id}", tenant_id="acme", event_id=event_id,
                   event_type="CARE_DUE", entity_id="C-1", correlation_id="c", schema_version=3)
    action = ActionRequest(ref=ref, adapter="messaging", action="send_message",
                           action_key=f"k-{event_id}", channel="sms", body="hi",
                           policy_version="v", approved_by="an.tran")
    return StepFailure(ref=ref, step="execute_action", error_class="rejected", code=code,
                       action=action, seq=seq)


async def test_the_send_steps_executing_is_written_with_its_dead_letter_once(
        pool: asyncpg.Pool) -> None:
    failure = send_failure("action_token_content_changed")
    wid = failure.ref.workflow_id
    dead_letters = DeadLetterActivities(OpsStore(pool))
    for _ in range(2):  # a retried call writes nothing more
        await dead_letters.dead_letter_step(failure)
    assert [tuple(r) for r in await pool.fetch(ROWS_SQL, wid)] == [(
        7, "APPROVED", "EXECUTING", "execute",
        "send step failed before its receipt (action_token_content_changed), nothing sent")]
    assert await pool.fetchval("SELECT count(*) FROM dead_letters WHERE workflow_id = $1",
                               wid) == 1


async def test_an_executing_step_the_send_recorded_is_left_as_it_is(pool: asyncpg.Pool) -> None:
    """A send that opened its receipt recorded the step with its own reason; its retries spent,
    the dead letter leaves that row alone (the step statement alone would rewrite it)."""
    failure = send_failure("execute_action_timed_out")
    ref = failure.ref
    opened = "receipt opened, calling the target"
    await PostgresStore(pool).record_step(StepRecord(ref=ref, policy_version="v", transitions=[
        Transition(seq=7, from_state=EventState.APPROVED, to_state=EventState.EXECUTING,
                   actor="execute", reason=opened)]))
    await DeadLetterActivities(OpsStore(pool)).dead_letter_step(failure)
    rows = await pool.fetch(ROWS_SQL, ref.workflow_id)
    assert [(r["seq"], r["reason"]) for r in rows] == [(7, opened)]
    assert await pool.fetchval("SELECT count(*) FROM dead_letters WHERE workflow_id = $1",
                               ref.workflow_id) == 1


async def test_a_dead_letter_with_no_send_number_writes_no_transition(
        pool: asyncpg.Pool) -> None:
    """Runs recorded before the number travelled with the failure, and the context step."""
    failure = send_failure("no_approval_on_record", seq=None)
    await DeadLetterActivities(OpsStore(pool)).dead_letter_step(failure)
    assert await pool.fetch(ROWS_SQL, failure.ref.workflow_id) == []
    assert await pool.fetchval("SELECT count(*) FROM dead_letters WHERE workflow_id = $1",
                               failure.ref.workflow_id) == 1
