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
"""

from __future__ import annotations

from asyncpg.pool import PoolConnectionProxy

from adapters.postgres.pgtext import pg_text
from adapters.postgres.steps import TRANSITION_SQL, step_args
from contracts import EventRef, EventState, FinalOutcome, Receipt, StepRecord, Transition
from contracts.actions import UNRECONCILED_CODE, ReceiptStatus, ReplaySettle

#: The events row's reason code once a replay settled its write.
REPLAYED_CODE = "dead_letter_replayed"
#: A settled receipt -> the state the event follows it to.
FOLLOWS_TO = {ReceiptStatus.SUCCEEDED: EventState.SUCCEEDED,
              ReceiptStatus.REJECTED: EventState.REJECTED}
#: The stops a replay's settle is followed from: the write's dead letter ended the event. The
#: reconciler's code, and ``ops close --unresolved-write``'s (``adapters.postgres.run_close``:
#: how the run ended + ``_write_unknown``).
_STOPPED_ON_ITS_DEAD_LETTER = (
    "e.state = 'STOPPED' AND (e.reason_code = $2 OR e.reason_code LIKE '%\\_write\\_unknown')")

_EVENT_SQL = f"""
SELECT e.workflow_id, e.tenant_id, e.event_id, e.event_type, e.entity_id, e.correlation_id,
       e.schema_version, e.payload_fingerprint, e.state, e.last_seq, e.policy_version
FROM events e JOIN receipts r ON r.workflow_id = e.workflow_id
WHERE r.action_key = $1 AND {_STOPPED_ON_ITS_DEAD_LETTER}
FOR UPDATE OF e
"""
#: Who claimed the replay (``OpsStore.claim_replay`` audits it).
_REPLAYED_BY_SQL = """
SELECT actor FROM audit WHERE action = 'dlq_replay' AND target = $1
  AND detail->>'replay' = $2 ORDER BY id DESC LIMIT 1
"""


async def follow_replay(conn: PoolConnectionProxy, receipt: Receipt,
                        replay: ReplaySettle) -> int | None:
    """Record the end of the event ``receipt``'s dead letter stopped, now that ``replay``
    settled it. Returns the transition's number, or None when nothing follows (no such stop,
    or an open receipt). Call it in the settle's transaction."""
    to_state = FOLLOWS_TO.get(receipt.status)
    if to_state is None:
        return None
    row = await conn.fetchrow(_EVENT_SQL, receipt.action_key, UNRECONCILED_CODE)
    if row is None:
        return None
    by = None
    if replay.number is not None:
        by = await conn.fetchval(_REPLAYED_BY_SQL, f"dead_letter/{replay.dead_letter}",
                                 str(replay.number))
    number = f"replay {replay.number}" if replay.number is not None else "a replay"
    reason = (f"{number} of dead letter {replay.dead_letter}: {replay.how},"
              f" receipt {receipt.status.value}")
    ref = EventRef(workflow_id=row["workflow_id"], tenant_id=row["tenant_id"],
                   event_id=row["event_id"], event_type=row["event_type"],
                   entity_id=row["entity_id"], correlation_id=row["correlation_id"],
                   schema_version=row["schema_version"])
    outcome = FinalOutcome(workflow_id=ref.workflow_id, tenant_id=ref.tenant_id,
                           event_id=ref.event_id, state=to_state, receipt=receipt,
                           reason_code=REPLAYED_CODE, policy_version=row["policy_version"],
                           payload_fingerprint=row["payload_fingerprint"])
    seq = int(row["last_seq"]) + 1
    step = StepRecord(
        ref=ref, reason_code=REPLAYED_CODE, policy_version=row["policy_version"],
        outcome=outcome, transitions=[Transition(
            seq=seq, from_state=EventState.STOPPED, to_state=to_state,
            actor=f"operator:{pg_text(by)}" if by else "replay", reason=reason)])
    await conn.fetchval(TRANSITION_SQL, *step_args(step))
    return seq
