"""A workflow task lost after its step was written: the task runs again and, with a new input
(the other of two racing decisions), records another transition under the same number. The
store must end where the workflow ends, and the audit chain must still verify.

Found by `tollgate chaos --seeds` (seed 13): the workflow ended REJECTED while PostgreSQL kept
the APPROVED written by the lost task, with an approval nobody acted on."""

from __future__ import annotations

import asyncpg

from adapters.postgres.audit import AuditStore
from adapters.postgres.store import PostgresStore
from contracts import (
    EventRef,
    EventState,
    FinalOutcome,
    ReviewDecision,
    StepRecord,
    Transition,
)
from tests.conftest import fresh_key


async def awaiting_review(pool: asyncpg.Pool) -> EventRef:
    """An event row and its transitions up to AWAITING_REVIEW (seq 1-2)."""
    key = fresh_key("k")
    ref = EventRef(workflow_id=f"event/acme/{key}", tenant_id="acme", event_id=f"evt-{key}",
                   event_type="CARE_DUE", entity_id="C-1", correlation_id="c", schema_version=3)
    await pool.execute(
        "INSERT INTO events (workflow_id, run_id, tenant_id, idempotency_key, event_id,"
        " event_type, schema_version, entity_id, correlation_id, payload_fingerprint,"
        " occurred_at, received_at, state, last_seq)"
        " VALUES ($1, 'r1', 'acme', $2, $3, 'CARE_DUE', 3, 'C-1', 'c', 'fp', now(), now(),"
        " 'RECEIVED', 0)", ref.workflow_id, key, ref.event_id)
    await PostgresStore(pool).record_step(step(ref, [
        (1, EventState.RECEIVED, EventState.DRAFTED),
        (2, EventState.DRAFTED, EventState.AWAITING_REVIEW)]))
    return ref


def step(ref: EventRef, moves: list[tuple[int, EventState, EventState]], *,
         decision: ReviewDecision | None = None, final: EventState | None = None,
         reason: str = "ok") -> StepRecord:
    outcome = (FinalOutcome(workflow_id=ref.workflow_id, tenant_id="acme", state=final,
                            reason_code=reason) if final else None)
    return StepRecord(
        ref=ref, transitions=[Transition(seq=n, from_state=a, to_state=b, actor="workflow",
                                         reason=reason) for n, a, b in moves],
        decision=decision, outcome=outcome, reason_code=reason if final else None)


def decide(kind: str, reviewer: str) -> ReviewDecision:
    return ReviewDecision(request_id="rq-1", decision=kind, reviewer=reviewer, role="care_lead",
                          reason="chaos", draft_version=1, tenant_id="acme")


async def rows(pool: asyncpg.Pool, ref: EventRef) -> tuple[str, list[str], list[tuple]]:
    state = await pool.fetchval("SELECT state FROM events WHERE workflow_id = $1",
                                ref.workflow_id)
    transitions = [r["to_state"] for r in await pool.fetch(
        "SELECT to_state FROM state_transitions WHERE workflow_id = $1 ORDER BY seq",
        ref.workflow_id)]
    decisions = [tuple(r) for r in await pool.fetch(
        "SELECT decision, reviewer, accepted, refusal_code FROM review_decisions"
        " WHERE workflow_id = $1 ORDER BY decision_key", ref.workflow_id)]
    return state, transitions, decisions


async def test_the_run_that_goes_on_replaces_what_the_lost_task_wrote(
        pool: asyncpg.Pool) -> None:
    store, audit = PostgresStore(pool), AuditStore(pool)
    ref = await awaiting_review(pool)
    # The lost task accepted an.tran's approval and recorded APPROVED as seq 3.
    await store.record_step(step(ref, [(3, EventState.AWAITING_REVIEW, EventState.APPROVED)],
                                 decision=decide("approve", "an.tran")))
    # Run again, it took bao.le's rejection first and finished REJECTED, also as seq 3.
    assert await store.record_step(step(
        ref, [(3, EventState.AWAITING_REVIEW, EventState.REJECTED)],
        decision=decide("reject", "bao.le"), final=EventState.REJECTED,
        reason="reviewer_rejected"))
    assert await rows(pool, ref) == (
        "REJECTED", ["DRAFTED", "AWAITING_REVIEW", "REJECTED"],
        [("reject", "bao.le", True, None)])
    outcome = await pool.fetchval("SELECT outcome->>'state' FROM events WHERE workflow_id = $1",
                                  ref.workflow_id)
    assert outcome == "REJECTED"
    assert await audit.verify_event(ref.workflow_id) == []
    ops = [(e["source"], e["row_key"], e["op"]) for e in await audit.chain(ref.workflow_id)]
    assert ops[-2:] == [("state_transitions", "3", "UPDATE"),
                        ("review_decisions", f"{ref.workflow_id}#a3", "UPDATE")]


async def test_a_lost_approval_the_run_did_not_repeat_stops_counting(
        pool: asyncpg.Pool) -> None:
    """The lost task approved; run again, the review deadline had fired first: EXPIRED under
    seq 3, with no decision. The approval stays on record, marked, and no longer counts."""
    store, audit = PostgresStore(pool), AuditStore(pool)
    ref = await awaiting_review(pool)
    await store.record_step(step(ref, [(3, EventState.AWAITING_REVIEW, EventState.APPROVED)],
                                 decision=decide("approve", "an.tran")))
    await store.record_step(step(ref, [(3, EventState.AWAITING_REVIEW, EventState.EXPIRED)],
                                 final=EventState.EXPIRED, reason="review_deadline_passed"))
    assert await rows(pool, ref) == (
        "EXPIRED", ["DRAFTED", "AWAITING_REVIEW", "EXPIRED"],
        [("approve", "an.tran", False, "lost_workflow_task")])
    assert await audit.verify_event(ref.workflow_id) == []


async def test_a_plain_retry_and_a_stale_step_change_nothing(pool: asyncpg.Pool) -> None:
    store, audit = PostgresStore(pool), AuditStore(pool)
    ref = await awaiting_review(pool)
    approved = step(ref, [(3, EventState.AWAITING_REVIEW, EventState.APPROVED)],
                    decision=decide("approve", "an.tran"))
    await store.record_step(approved)
    await store.record_step(step(ref, [(4, EventState.APPROVED, EventState.EXECUTING)]))
    entries = len(await audit.chain(ref.workflow_id))
    assert not await store.record_step(approved)  # the same step again: nothing written
    assert await rows(pool, ref) == (
        "EXECUTING", ["DRAFTED", "AWAITING_REVIEW", "APPROVED", "EXECUTING"],
        [("approve", "an.tran", True, None)])
    assert len(await audit.chain(ref.workflow_id)) == entries


async def test_a_retry_finds_only_its_own_step_recorded(pool: asyncpg.Pool) -> None:
    """``recorded_at``, which a retried approval asks before it trusts its first attempt's
    decision (activities/approval.py): only the very same step, decision included, counts."""
    store = PostgresStore(pool)
    ref = await awaiting_review(pool)
    approved = step(ref, [(3, EventState.AWAITING_REVIEW, EventState.APPROVED)],
                    decision=decide("approve", "an.tran"))
    assert await store.recorded_at(approved) is None  # nothing under its number yet
    await store.record_step(approved)
    at = await store.recorded_at(approved)
    assert at is not None
    assert at == await pool.fetchval("SELECT at FROM state_transitions WHERE workflow_id = $1"
                                     " AND seq = 3", ref.workflow_id)
    # Another reviewer's approval under the same number, or the same one for another request.
    assert await store.recorded_at(step(
        ref, [(3, EventState.AWAITING_REVIEW, EventState.APPROVED)],
        decision=decide("approve", "bao.le"))) is None
    other_request = decide("approve", "an.tran").model_copy(update={"request_id": "rq-2"})
    assert await store.recorded_at(step(
        ref, [(3, EventState.AWAITING_REVIEW, EventState.APPROVED)],
        decision=other_request)) is None
    # Replaced by the run that went on (a lost task): the approval is no longer on record.
    await store.record_step(step(ref, [(3, EventState.AWAITING_REVIEW, EventState.REJECTED)],
                                 decision=decide("reject", "bao.le"), final=EventState.REJECTED,
                                 reason="rejected"))
    assert await store.recorded_at(approved) is None
