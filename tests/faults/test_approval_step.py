"""The approval's fused step (``approve_and_mint``: re-count, record APPROVED, mint the action
token; ADR 0053) failing, on the time-skipping server with the real activities and PostgreSQL:
the transitions stay numbered 1..n without a gap, and the state agrees in PostgreSQL, the
workflow's query and the search attribute.

It can fail for good in one way only: the mint's ``no_approval_on_record``, which comes after
the approval is recorded. The re-count and the record fail only as PostgreSQL fails, which is
retryable, and ``STORE_RETRY`` has no limit on attempts (nor the step a schedule-to-close), so
an outage holds the run at AWAITING_REVIEW until PostgreSQL answers again. A gate that refuses
on the re-count is no failure: nothing is written and the numbers are given back
(tests/workflows/test_review.py, the daily limit); nor is a limit filled while a retry of the
step waits, after its first attempt recorded APPROVED: the retry keeps that decision.

Faults are laid in the module's own database by triggers on this test's workflow ids only.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest
from temporalio.client import Client

from adapters.postgres.action_tokens import ActionTokenStore
from adapters.postgres.store import PostgresStore
from contracts import EventState, IntakeRequest, ReviewDecision
from contracts.events import STARTED_SHAPE
from tests.conftest import Handle, fresh_key, signed_event, start, wait_review
from tests.eventually import eventually
from tests.faults.conftest import local_activity_attempts, send_key
from tests.faults.kill_switch_support import customer, sent
from tests.faults.rollout_support import TRANSITIONS_SQL, ended_after_executing
from tests.faults.step_failures_support import dead_lettered_from_executing
from tollgate.dev.standins import StandIns
from workflows import timeouts as t
from workflows.process_event import ProcessEventWorkflow

FAULTS_SQL = """
CREATE TABLE IF NOT EXISTS test_faults (workflow_id text NOT NULL, fault text NOT NULL);
CREATE SEQUENCE IF NOT EXISTS test_fault_hits;
-- The approval is not on record when the mint reads it (a decision row that does not keep it).
CREATE OR REPLACE FUNCTION test_approval_not_kept() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM test_faults WHERE workflow_id = NEW.workflow_id
                                           AND fault = 'approval_not_kept') THEN
        NEW.accepted := false;
    END IF;
    RETURN NEW;
END $$;
CREATE OR REPLACE TRIGGER test_approval_not_kept BEFORE INSERT OR UPDATE ON review_decisions
    FOR EACH ROW EXECUTE FUNCTION test_approval_not_kept();
-- The approval's write answered as by a server shutting down, each try counted.
CREATE OR REPLACE FUNCTION test_approval_down() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.to_state = 'APPROVED' AND EXISTS (
            SELECT 1 FROM test_faults WHERE workflow_id = NEW.workflow_id
                                        AND fault = 'postgres_down') THEN
        PERFORM nextval('test_fault_hits');  -- not rolled back with the statement
        RAISE EXCEPTION 'terminating connection due to administrator command'
            USING ERRCODE = 'admin_shutdown';
    END IF;
    RETURN NEW;
END $$;
CREATE OR REPLACE TRIGGER test_approval_down BEFORE INSERT ON state_transitions
    FOR EACH ROW EXECUTE FUNCTION test_approval_down();
"""


@pytest.fixture
async def faults(db: asyncpg.Pool) -> AsyncIterator[asyncpg.Pool]:
    await db.execute(FAULTS_SQL)
    yield db
    await db.execute("DELETE FROM test_faults")


async def start_quick(client: Client, queue: str, raw: str) -> Handle:
    """``start``, with workflow tasks of 4 s instead of Temporal's 10 s. While a local activity
    retries, the worker holds the workflow task and answers a query or an update only when it
    heartbeats that task, at 80 % of its timeout: 8 s a look at the default, 3.2 s here (not
    shorter: a task the loaded machine fails to answer in time is retried, and muddies the
    local activity's attempts this module reads)."""
    return await client.start_workflow(
        ProcessEventWorkflow.run,
        IntakeRequest(raw=raw, received_at=datetime.now(UTC), shape=STARTED_SHAPE),
        id=f"event/test/{fresh_key()}", task_queue=queue, task_timeout=timedelta(seconds=4))


async def approve(handle: Handle) -> None:
    ticket = await wait_review(handle)
    await handle.execute_update("review", ReviewDecision(
        request_id=ticket["request_id"], decision="approve", reviewer="an.tran",
        role="care_lead", reason="ok", draft_version=ticket["draft_version"]))


async def shown(handle: Handle) -> list[str] | None:
    """The state in the search attribute."""
    return (await handle.describe()).search_attributes.get("TollgateState")  # type: ignore[return-value]


async def test_an_approval_the_mint_finds_no_record_of_is_dead_lettered_without_a_gap(
    worker_client: tuple[Client, str], standins: StandIns, faults: asyncpg.Pool,
) -> None:
    """Fault: the accepted approval is not on record when the fused step's mint reads it.
    Evidence: approve_and_mint failed for good on its first attempt; no send was scheduled.
    Invariant: the approval's transition is in PostgreSQL under its number, the EXECUTING the
    run counted after it is written with the dead letter, then DEAD_LETTERED: 1..n, each from
    the state the one before entered; row, outcome, query and search attribute agree."""
    client, queue = worker_client
    key = fresh_key("unkept")
    handle = await start(client, queue, signed_event(customer(standins), key=key))
    await wait_review(handle)
    await faults.execute("INSERT INTO test_faults VALUES ($1, 'approval_not_kept')", handle.id)
    await approve(handle)

    outcome = await handle.result()
    assert (outcome.state, outcome.reason_code) == (EventState.DEAD_LETTERED,
                                                    "no_approval_on_record")
    assert await local_activity_attempts(client, handle.id, "approve_and_mint") == [(1, True)]
    assert sent(standins, send_key(key)) == (0, 0)
    await dead_lettered_from_executing(faults.fetch, handle, "no_approval_on_record")
    rows = await faults.fetch("SELECT from_state, to_state, actor, reason FROM state_transitions"
                              " WHERE workflow_id = $1 ORDER BY seq", handle.id)
    assert tuple(rows[-3]) == ("AWAITING_REVIEW", "APPROVED", "reviewer:an.tran",
                               "approved by an.tran")


async def test_postgresql_down_at_the_approval_holds_the_run_until_it_answers(
    worker_client: tuple[Client, str], standins: StandIns, faults: asyncpg.Pool,
) -> None:
    """Fault: every write of the approval fails as PostgreSQL shutting down does, for several
    of the step's retries, then PostgreSQL answers again.
    Evidence: the trigger counted the refused writes; approve_and_mint completed on a later
    attempt, never failed for good.
    Invariant: meanwhile the run stays AWAITING_REVIEW in PostgreSQL, the query and the search
    attribute; then it sends once and ends SUCCEEDED, its transitions 1..n with APPROVED
    under its number and nothing dead-lettered."""
    assert t.STORE_RETRY.maximum_attempts == 0  # the step never gives up on PostgreSQL
    client, queue = worker_client
    key = fresh_key("pgdown")
    handle = await start_quick(client, queue, signed_event(customer(standins), key=key))
    await wait_review(handle)
    await faults.execute("INSERT INTO test_faults VALUES ($1, 'postgres_down')", handle.id)
    before = await faults.fetchval("SELECT nextval('test_fault_hits')")
    await approve(handle)

    await eventually(lambda: faults.fetchval("SELECT last_value FROM test_fault_hits"),
                     "three refused writes of the approval", until=lambda n: n >= before + 3)
    assert await handle.query("state") == EventState.AWAITING_REVIEW
    assert await shown(handle) == ["AWAITING_REVIEW"]
    [row] = await faults.fetch("SELECT state, last_seq FROM events WHERE workflow_id = $1",
                               handle.id)
    assert row["state"] == "AWAITING_REVIEW"
    assert await faults.fetchval("SELECT max(seq) FROM state_transitions WHERE workflow_id = $1",
                                 handle.id) == row["last_seq"]
    await faults.execute("DELETE FROM test_faults WHERE workflow_id = $1", handle.id)

    outcome = await handle.result()
    assert outcome.state == EventState.SUCCEEDED
    [(attempt, failed)] = await local_activity_attempts(client, handle.id, "approve_and_mint")
    assert attempt > 3 and not failed
    assert sent(standins, send_key(key)) == (1, 1)
    rows = await faults.fetch(TRANSITIONS_SQL, handle.id)
    ended_after_executing(list(rows), "SUCCEEDED")
    assert tuple(rows[row["last_seq"]])[1:] == ("AWAITING_REVIEW", "APPROVED")
    [event] = await faults.fetch("SELECT state, last_seq FROM events WHERE workflow_id = $1",
                                 handle.id)
    assert tuple(event) == ("SUCCEEDED", len(rows))
    assert await handle.query("state") == EventState.SUCCEEDED
    assert await shown(handle) == ["SUCCEEDED"]
    assert await faults.fetchval("SELECT count(*) FROM dead_letters WHERE workflow_id = $1",
                                 handle.id) == 0


FILL_SQL = """
WITH other AS (
    INSERT INTO events (workflow_id, run_id, tenant_id, idempotency_key, event_id, event_type,
                        schema_version, entity_id, correlation_id, payload_fingerprint,
                        occurred_at, received_at, state, last_seq)
    SELECT e.workflow_id || '/other' || n, 'other', e.tenant_id, e.idempotency_key || '/' || n,
           e.event_id || '/' || n, e.event_type, e.schema_version, e.entity_id,
           e.correlation_id, 'fp', now(), now(), 'SUCCEEDED', 0
    FROM events e, generate_series(1, $2) n WHERE e.workflow_id = $1
    RETURNING workflow_id, tenant_id, event_id, correlation_id
)
INSERT INTO receipts (action_key, tenant_id, adapter, action, event_id, workflow_id,
                      correlation_id, request_fingerprint, status)
SELECT 'fill/' || workflow_id, tenant_id, 'messaging', 'send_message', event_id, workflow_id,
       correlation_id, 'fp', 'SUCCEEDED' FROM other
"""


async def test_a_retried_approval_is_not_undone_by_a_limit_filled_during_its_backoff(
    worker_client: tuple[Client, str], standins: StandIns, faults: asyncpg.Pool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Fault: the mint's read of the approval fails as PostgreSQL shutting down does (after
    APPROVED is recorded), and during the step's backoff other sends fill the customer's daily
    limit; then PostgreSQL answers again. A trigger cannot fail a read, so the read is failed
    in the store, for this test's workflow only.
    Evidence: APPROVED was in PostgreSQL while the mint failed; approve_and_mint completed on a
    later attempt; a re-count at that time stops the send (the limit is full).
    Invariant: the retry does what its first attempt decided: the approval stays under its
    number (no STOPPED replaces it), the run sends once and ends SUCCEEDED, 1..n without a gap,
    PostgreSQL and the query agree."""
    client, queue = worker_client
    key, who = fresh_key("refill"), customer(standins)
    handle = await start_quick(client, queue, signed_event(who, key=key))
    ticket = await wait_review(handle)
    failed: list[str] = []
    has_approval = ActionTokenStore.has_approval

    async def blip(self: ActionTokenStore, workflow_id: str, draft_version: int) -> bool:
        if workflow_id == handle.id and not filled:
            failed.append(workflow_id)
            raise asyncpg.exceptions.AdminShutdownError(
                "terminating connection due to administrator command")
        return await has_approval(self, workflow_id, draft_version)

    filled = False
    monkeypatch.setattr(ActionTokenStore, "has_approval", blip)
    await approve(handle)

    await eventually(lambda: len(failed), "the mint's read failing")
    [approved] = await faults.fetch(
        "SELECT seq FROM state_transitions WHERE workflow_id = $1 AND to_state = 'APPROVED'",
        handle.id)
    limit = ticket["route"]["daily_limit"]
    await faults.execute(FILL_SQL, handle.id, limit)
    sends, _ = await PostgresStore(faults).count_gate_inputs(
        tenant_id="acme", entity_id=who, adapter="messaging",
        action="send_message", as_of=datetime.now(UTC), workflow_id=handle.id)
    assert sends >= limit  # a decision taken now would stop the send
    filled = True

    outcome = await handle.result()
    assert outcome.state == EventState.SUCCEEDED
    [(attempt, failed_for_good)] = await local_activity_attempts(client, handle.id,
                                                                 "approve_and_mint")
    assert attempt > 1 and not failed_for_good
    assert sent(standins, send_key(key)) == (1, 1)
    rows = await faults.fetch(TRANSITIONS_SQL, handle.id)
    ended_after_executing(list(rows), "SUCCEEDED")
    assert tuple(rows[approved["seq"] - 1])[1:] == ("AWAITING_REVIEW", "APPROVED")
    assert await faults.fetchval("SELECT state FROM events WHERE workflow_id = $1",
                                 handle.id) == "SUCCEEDED"
    assert await handle.query("state") == EventState.SUCCEEDED
