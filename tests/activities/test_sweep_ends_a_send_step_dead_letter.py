"""A send step that gave up for good with its receipt open (retries spent, or timed out) ends
the event DEAD_LETTERED with a dead letter whose plan says: submit the event again under a new
event id. The receipt sweep is the first to look that write up; when the target holds it, the
sweep settled the receipt SUCCEEDED and nothing else, so the event stayed DEAD_LETTERED and its
dead letter OPEN beside a message that went out, one resubmission away from a second send. Now
the event follows DEAD_LETTERED -> SUCCEEDED (`receipt_swept`, by `sweep`) and the dead letter
closes, in the settle's transaction (ADR 0065). Real PostgreSQL, the real sweep activity."""

from __future__ import annotations

import json

import asyncpg

from activities.dead_letters import DeadLetterActivities
from activities.sweep import SweepActivities
from adapters.ports.targets import TargetWrite
from adapters.postgres.audit import AuditStore
from adapters.postgres.ops import OpsStore
from adapters.postgres.receipts import ReceiptStore
from adapters.postgres.store import PostgresStore
from contracts import (
    ActionRequest,
    EventRef,
    EventState,
    FinalOutcome,
    StepFailure,
    StepRecord,
    Transition,
)
from contracts.sweep import SweepRequest, SweptEnd
from policies.keys import action_key
from tests.conftest import fresh_key
from tollgate.cli.ops_sweep import sweep_lines

CODE = "execute_action_timed_out"
SWEPT = "the receipt sweep found the write at the target, receipt SUCCEEDED"


class HoldingTarget:
    """A target that holds every key it is asked about, under one id."""

    supports_lookup = True
    dedupes_by_key = True

    async def lookup(self, key: str) -> TargetWrite | None:
        return TargetWrite(idempotency_key=key, external_id="msg-late-1")


async def dead_lettered_by_its_send(pool: asyncpg.Pool) -> tuple[str, str, int]:
    """An event whose send step opened its receipt and gave up (``execute_action_timed_out``),
    as the run records it: transitions 1-3 up to EXECUTING with the receipt, the send step's
    dead letter, then EXECUTING -> DEAD_LETTERED (4). The receipt is left PENDING and 20
    minutes old, the sweep's to look up. Returns the workflow id, action key and dead letter."""
    event_id = fresh_key("evt")
    ref = EventRef(workflow_id=f"event/acme/{event_id}", tenant_id="acme", event_id=event_id,
                   event_type="CARE_DUE", entity_id="C-1", correlation_id="c", schema_version=3)
    action = ActionRequest(ref=ref, adapter="messaging", action="send_message",
                           action_key=action_key("acme", event_id, "messaging", "send_message"),
                           channel="sms", body="hi", policy_version="v", approved_by="an.tran")
    await pool.execute(
        "INSERT INTO events (workflow_id, run_id, tenant_id, idempotency_key, event_id,"
        " event_type, schema_version, entity_id, correlation_id, payload_fingerprint,"
        " occurred_at, received_at, state, last_seq)"
        " VALUES ($1, 'r1', 'acme', $2, $3, 'CARE_DUE', 3, 'C-1', 'c', 'fp', now(), now(),"
        " 'RECEIVED', 0)", ref.workflow_id, event_id, ref.event_id)
    store = PostgresStore(pool)
    await store.record_step(StepRecord(ref=ref, policy_version="v", transitions=[
        Transition(seq=n, from_state=a, to_state=b, actor="workflow", reason="ok")
        for n, a, b in [(1, EventState.RECEIVED, EventState.AWAITING_REVIEW),
                        (2, EventState.AWAITING_REVIEW, EventState.APPROVED),
                        (3, EventState.APPROVED, EventState.EXECUTING)]]))
    await ReceiptStore(pool).open_receipt(action, "fp")
    await DeadLetterActivities(OpsStore(pool)).dead_letter_step(StepFailure(
        ref=ref, step="execute_action", error_class="timeout", code=CODE, action=action, seq=3))
    await store.record_step(StepRecord(
        ref=ref, policy_version="v", reason_code=CODE,
        outcome=FinalOutcome(workflow_id=ref.workflow_id, tenant_id="acme",
                             event_id=ref.event_id, state=EventState.DEAD_LETTERED,
                             reason_code=CODE),
        transitions=[Transition(seq=4, from_state=EventState.EXECUTING,
                                to_state=EventState.DEAD_LETTERED, actor="workflow",
                                reason=f"send step failed ({CODE})")]))
    await pool.execute("UPDATE receipts SET updated_at = now() - interval '20 minutes'"
                       " WHERE action_key = $1", action.action_key)
    letter = await pool.fetchval("SELECT id FROM dead_letters WHERE workflow_id = $1",
                                 ref.workflow_id)
    return ref.workflow_id, action.action_key, int(letter)


async def test_the_sweep_finding_a_send_steps_write_ends_the_event_and_its_dead_letter(
        pool: asyncpg.Pool) -> None:
    wid, key, letter = await dead_lettered_by_its_send(pool)
    assert tuple(await pool.fetchrow("SELECT state, last_seq FROM events WHERE workflow_id = $1",
                                     wid)) == ("DEAD_LETTERED", 4)
    # Its plan, as `ops dlq show` prints it, says to wait for the sweep while the receipt is
    # open, before any resubmission (a new event id is a new key: a second send).
    plan = await pool.fetchval("SELECT replay_plan FROM dead_letters WHERE id = $1", letter)
    assert "while the receipt is open, wait for the sweep" in plan, plan
    assert plan.index("wait for the sweep") < plan.index("submit the event again"), plan
    sweep = SweepActivities(ReceiptStore(pool), {"messaging": HoldingTarget()})  # type: ignore[dict-item]

    report = await sweep.sweep_receipts(SweepRequest(recheck_recent=0))

    assert key in report.settled_found_at_target
    # The report says what followed: `ops sweep`'s line, and its --json.
    assert report.followed == [SweptEnd(
        action_key=key, workflow_id=wid, from_state=EventState.DEAD_LETTERED,
        to_state=EventState.SUCCEEDED, dead_letters_closed=[letter])]
    assert (f"  followed  {wid}: DEAD_LETTERED -> SUCCEEDED (receipt_swept); dead letter"
            f" {letter} closed") in sweep_lines(report)
    assert json.loads(report.model_dump_json())["followed"] == [{
        "action_key": key, "workflow_id": wid, "from_state": "DEAD_LETTERED",
        "to_state": "SUCCEEDED", "dead_letters_closed": [letter]}]
    assert tuple(await pool.fetchrow("SELECT status, external_id FROM receipts"
                                     " WHERE action_key = $1", key)) == ("SUCCEEDED", "msg-late-1")
    event = await pool.fetchrow("SELECT state, reason_code, outcome FROM events"
                                " WHERE workflow_id = $1", wid)
    outcome = json.loads(event["outcome"])
    assert (event["state"], event["reason_code"], outcome["state"], outcome["reason_code"],
            (outcome["receipt"] or {}).get("status")) == (
        "SUCCEEDED", "receipt_swept", "SUCCEEDED", "receipt_swept", "SUCCEEDED")
    after = await pool.fetch("SELECT seq, from_state, to_state, actor, reason"
                             " FROM state_transitions WHERE workflow_id = $1 AND seq > 4", wid)
    assert [tuple(t) for t in after] == [(5, "DEAD_LETTERED", "SUCCEEDED", "sweep", SWEPT)]
    row = await pool.fetchrow("SELECT status, closed_by, closed_reason FROM dead_letters"
                              " WHERE id = $1", letter)
    assert tuple(row) == ("CLOSED", "sweep", "the receipt sweep found the write at the target:"
                          " receipt SUCCEEDED, nothing to replay")
    assert await pool.fetchval("SELECT count(*) FROM audit WHERE action = 'dlq_close'"
                               " AND target = $1", f"dead_letter/{letter}") == 1
    assert await AuditStore(pool).verify_event(wid) == []
    # A second sweep finds nothing open and records nothing more.
    again = await sweep.sweep_receipts(SweepRequest(recheck_recent=0))
    assert again.followed == [] and key not in again.settled_found_at_target
    assert await pool.fetchval("SELECT last_seq FROM events WHERE workflow_id = $1", wid) == 5


async def test_a_send_steps_write_the_target_does_not_hold_stays_dead_lettered(
        pool: asyncpg.Pool) -> None:
    """Not found: the receipt stays open, the event DEAD_LETTERED, its dead letter OPEN."""
    wid, key, letter = await dead_lettered_by_its_send(pool)

    class EmptyTarget(HoldingTarget):
        async def lookup(self, key: str) -> TargetWrite | None:
            return None

    sweep = SweepActivities(ReceiptStore(pool), {"messaging": EmptyTarget()})  # type: ignore[dict-item]
    report = await sweep.sweep_receipts(SweepRequest(recheck_recent=0))
    assert key in report.still_open and report.followed == []
    assert await pool.fetchval("SELECT state FROM events WHERE workflow_id = $1",
                               wid) == "DEAD_LETTERED"
    assert await pool.fetchval("SELECT status FROM dead_letters WHERE id = $1", letter) == "OPEN"
