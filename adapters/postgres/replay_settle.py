"""The event follows its receipt when a dead letter's replay settles the write (ADR 0061).

A write nobody could confirm or rule out ends its event STOPPED with a dead letter: the
reconciler's (``unreconciled_write``) or ``tollgate ops close --unresolved-write``'s
(``run_terminated_write_unknown`` and the other ``*_write_unknown`` codes), the receipt left
open. Its approved replay (``tollgate ops dlq replay``) is a reconciler run of its own, with no
event run behind it to record what it found: so when that replay settles the receipt final (the
key found at the target, resent, or the resend refused by the target), the same transaction
records the event's end after it, as the run would have: one more numbered transition, STOPPED
-> SUCCEEDED (or REJECTED), by the operator who replayed it, its reason naming the replay,
through ``TRANSITION_SQL`` (so the audit chain's triggers chain it), and the events row's
state, reason code and outcome with the settled receipt.

Only from that stop: an event in any other state (still RECONCILING, say, its run alive to
record the end itself) is left as it is, and so is one that already followed (a retried
activity finds it SUCCEEDED and writes nothing). The events row is locked after the receipt,
the order the send's own settle takes (``SETTLE_AND_RECORD_SQL``).

The same end is recorded, by the same SQL (``follow``), when the write is found settled another
way (ADR 0063): the receipt sweep finds it at the target (``follow_sweep``: actor ``sweep``,
reason code ``receipt_swept``, the write's open ``unreconciled_write`` dead letters closed, as
there is nothing left to replay), or ``tollgate ops dlq replay`` finds its receipt already
settled (SUCCEEDED, or REJECTED: the target's final no) and closes the dead letter without a
run (``follow_found_settled``: the operator, reason code ``receipt_already_settled``).

The sweep also ends an event its send step dead-lettered (ADR 0065): the step gave up for good
with its receipt open (DEAD_LETTERED, a dead letter of that write), and the sweep is the first
to look the write up. Found at the target, the event follows DEAD_LETTERED -> SUCCEEDED
(``receipt_swept``, by ``sweep``) and that dead letter closes: its plan (submit the event again
under a new event id) would send the message a second time.
"""

from __future__ import annotations

from asyncpg.pool import PoolConnectionProxy

from adapters.postgres.dead_letters import close_dead_letter_in
from adapters.postgres.pgtext import pg_text
from adapters.postgres.steps import TRANSITION_SQL, step_args
from contracts import EventRef, EventState, FinalOutcome, Receipt, StepRecord, Transition
from contracts.actions import (
    FOUND_SETTLED_CODE,
    REPLAYED_CODE,
    SWEPT_CODE,
    UNRECONCILED_CODE,
    ReceiptStatus,
    ReplaySettle,
)
from contracts.sweep import SweptEnd

#: The transition's actor when the sweep settled the write: no person runs it (the schedule,
#: or ``tollgate ops sweep``, which takes no token), so there is no name to give.
SWEEP_ACTOR = "sweep"
#: The closing reason of a dead letter whose replay found its receipt already settled, then the
#: receipt's status (``receipt already SUCCEEDED``); the replay metric reads it back
#: (``adapters.postgres.metrics``).
FOUND_SETTLED_REASON = "receipt already "
#: A settled receipt -> the state the event follows it to.
FOLLOWS_TO = {ReceiptStatus.SUCCEEDED: EventState.SUCCEEDED,
              ReceiptStatus.REJECTED: EventState.REJECTED}
#: The stops a replay's settle is followed from: the write's dead letter ended the event. The
#: reconciler's code, and ``ops close --unresolved-write``'s (``adapters.postgres.run_close``:
#: how the run ended + ``_write_unknown``).
_STOPPED_ON_ITS_DEAD_LETTER = (
    "e.state = 'STOPPED' AND (e.reason_code = $2 OR e.reason_code LIKE '%\\_write\\_unknown')")
#: The send step's stop (ADR 0065): it gave up for good with the write's receipt open and wrote
#: a dead letter of that write (``activities.dead_letters``). Only the sweep follows from it:
#: such a dead letter is never replayed, so no replay settles its receipt.
_DEAD_LETTERED_BY_ITS_SEND = (
    "e.state = 'DEAD_LETTERED' AND EXISTS (SELECT 1 FROM dead_letters d"
    " WHERE d.workflow_id = e.workflow_id AND d.action_key = $1 AND d.state = 'DEAD_LETTERED')")


def _event_sql(stops: str) -> str:
    return f"""
SELECT e.workflow_id, e.tenant_id, e.event_id, e.event_type, e.entity_id, e.correlation_id,
       e.schema_version, e.payload_fingerprint, e.state, e.last_seq, e.policy_version
FROM events e JOIN receipts r ON r.workflow_id = e.workflow_id
WHERE r.action_key = $1 AND ({stops})
FOR UPDATE OF e
"""


_EVENT_SQL = _event_sql(_STOPPED_ON_ITS_DEAD_LETTER)
_SWEPT_EVENT_SQL = _event_sql(f"({_STOPPED_ON_ITS_DEAD_LETTER}) OR ({_DEAD_LETTERED_BY_ITS_SEND})")
#: Who claimed the replay (``OpsStore.claim_replay`` audits it).
_REPLAYED_BY_SQL = """
SELECT actor FROM audit WHERE action = 'dlq_replay' AND target = $1
  AND detail->>'replay' = $2 ORDER BY id DESC LIMIT 1
"""
#: The write's dead letters still open: those a replay could still be asked of
#: (``tollgate.ops.actions``' ``REPLAYABLE``) and the send step's (ADR 0065). Once the write is
#: settled there is nothing left to replay, nor to submit again.
_SETTLED_OPEN_SQL = """
SELECT id FROM dead_letters WHERE action_key = $1 AND status <> 'CLOSED'
  AND (error_code = $2 OR state = 'DEAD_LETTERED')
ORDER BY id FOR UPDATE
"""


async def follow_replay(conn: PoolConnectionProxy, receipt: Receipt,
                        replay: ReplaySettle) -> int | None:
    """Record the end of the event ``receipt``'s dead letter stopped, now that ``replay``
    settled it. Returns the transition's number, or None when nothing follows (no such stop,
    or an open receipt). Call it in the settle's transaction."""
    if receipt.status not in FOLLOWS_TO:
        return None
    by = None
    if replay.number is not None:
        by = await conn.fetchval(_REPLAYED_BY_SQL, f"dead_letter/{replay.dead_letter}",
                                 str(replay.number))
    number = f"replay {replay.number}" if replay.number is not None else "a replay"
    return _seq(await follow(
        conn, receipt, actor=f"operator:{pg_text(by)}" if by else "replay",
        reason=(f"{number} of dead letter {replay.dead_letter}: {replay.how},"
                f" receipt {receipt.status.value}"), reason_code=REPLAYED_CODE))


async def follow_sweep(conn: PoolConnectionProxy, receipt: Receipt) -> SweptEnd | None:
    """The receipt sweep found ``receipt``'s write at the target (SUCCEEDED): record the end
    of the event its dead letter stopped, or its send step dead-lettered (ADR 0065), and close
    that write's dead letters still open, saying why (ADR 0063). Call it in the settle's
    transaction, after the receipt's row is locked. Returns what followed (for the sweep's
    report), or None when nothing did."""
    if receipt.status is not ReceiptStatus.SUCCEEDED:
        return None
    step = await follow(conn, receipt, actor=SWEEP_ACTOR, reason=(
        f"the receipt sweep found the write at the target, receipt {receipt.status.value}"),
        reason_code=SWEPT_CODE, send_step=True)
    closed = []
    for letter in await conn.fetch(_SETTLED_OPEN_SQL, receipt.action_key, UNRECONCILED_CODE):
        if await close_dead_letter_in(
                conn, int(letter["id"]), actor=SWEEP_ACTOR,
                reason=(f"the receipt sweep found the write at the target: receipt "
                        f"{receipt.status.value}, nothing to replay")):
            closed.append(int(letter["id"]))
    if step is None and not closed:
        return None
    if step is None:
        return SweptEnd(action_key=receipt.action_key, dead_letters_closed=closed)
    moved = step.transitions[0]
    return SweptEnd(action_key=receipt.action_key, workflow_id=step.ref.workflow_id,
                    from_state=moved.from_state, to_state=moved.to_state,
                    dead_letters_closed=closed)


async def follow_found_settled(conn: PoolConnectionProxy, receipt: Receipt, dead_letter: int,
                               operator: str) -> int | None:
    """``tollgate ops dlq replay`` of ``dead_letter`` found ``receipt`` already settled
    (SUCCEEDED or REJECTED) and runs nothing: the event its dead letter stopped follows the
    receipt (SUCCEEDED or REJECTED), by ``operator``, and the dead letter closes, its reason
    ``receipt already <STATUS>`` (as before ADR 0063, which the replay metric counts). Call
    it in one transaction, after the receipt's row is locked."""
    seq = _seq(await follow(conn, receipt, actor=f"operator:{pg_text(operator)}", reason=(
        f"dead letter {dead_letter}: not replayed, receipt already {receipt.status.value}"),
        reason_code=FOUND_SETTLED_CODE))
    await close_dead_letter_in(conn, dead_letter, actor=operator,
                               reason=FOUND_SETTLED_REASON + receipt.status.value)
    return seq


async def follow(conn: PoolConnectionProxy, receipt: Receipt, *, actor: str, reason: str,
                 reason_code: str, send_step: bool = False) -> StepRecord | None:
    """Record the end of the event ``receipt``'s dead letter stopped (``STOPPED ->`` the
    receipt's final state) as one numbered transition by ``actor`` for ``reason``, the events
    row's reason code ``reason_code``. ``send_step``: also from DEAD_LETTERED, the send step's
    stop (the sweep's, ADR 0065). Returns the step recorded; None when nothing follows: an
    open receipt, or no event in that stop (any other state, or one that followed already)."""
    to_state = FOLLOWS_TO.get(receipt.status)
    if to_state is None:
        return None
    row = await conn.fetchrow(_SWEPT_EVENT_SQL if send_step else _EVENT_SQL,
                              receipt.action_key, UNRECONCILED_CODE)
    if row is None:
        return None
    ref = EventRef(workflow_id=row["workflow_id"], tenant_id=row["tenant_id"],
                   event_id=row["event_id"], event_type=row["event_type"],
                   entity_id=row["entity_id"], correlation_id=row["correlation_id"],
                   schema_version=row["schema_version"])
    outcome = FinalOutcome(workflow_id=ref.workflow_id, tenant_id=ref.tenant_id,
                           event_id=ref.event_id, state=to_state, receipt=receipt,
                           reason_code=reason_code, policy_version=row["policy_version"],
                           payload_fingerprint=row["payload_fingerprint"])
    seq = int(row["last_seq"]) + 1
    step = StepRecord(
        ref=ref, reason_code=reason_code, policy_version=row["policy_version"],
        outcome=outcome, transitions=[Transition(
            seq=seq, from_state=EventState(row["state"]), to_state=to_state,
            actor=actor, reason=reason)])
    await conn.fetchval(TRANSITION_SQL, *step_args(step))
    return step


def _seq(step: StepRecord | None) -> int | None:
    return step.transitions[0].seq if step is not None else None
