"""Recording the end of an event whose run closed with no outcome (``tollgate ops close``).

A run terminated by hand, failed, timed out or canceled writes nothing more: its events row
keeps the state it stopped in (AWAITING_REVIEW, say) for ever, and ``ops status`` keeps
counting it. Closing records the end as every other end is recorded: one transition to
STOPPED under the next ``seq`` with a reason code naming how the run ended, the events row's
state, reason code and outcome, through ``TRANSITION_SQL`` (so the audit chain's triggers chain
the transition), and one ``audit`` row naming who and why, all in one transaction.

A run Temporal no longer knows (deleted after the namespace's retention) can be closed too, as
``run_not_found``, but only when the row has not changed for longer than that retention
(``quiet_for``). No intake path writes an events row before its workflow exists (the row is
admitted by the run's first activity), so a young row is not a run still starting: it is a
run this Temporal never had, because the command was pointed at another server or namespace
than the one that runs it, or one deleted by hand. Closing that would end a live event.

The events row is locked first, so two operators closing the same event at once write one end:
the second finds it terminal and writes nothing.

An event with a receipt had its send started (the receipt row is written before the call), so
STOPPED, "nothing was sent", is not its end: the receipt, the durable truth of the write, says
what is. A settled receipt ends the event as the run itself ends it after that receipt
(``contracts.review.FINAL_STATE``): SUCCEEDED -> SUCCEEDED, REJECTED -> REJECTED, WOULD_SEND (a
shadow send, nothing went out) -> STOPPED, with the receipt in the outcome, the reason code
``run_terminated_after_send`` (and so on) and only from a state the send ends from. An open one
(PENDING, UNKNOWN) is an unknown write: nothing is recorded, and nothing is sent; the receipt
sweep settles it from the target first. Unless the caller brings the evidence that nothing
will (``UnresolvedWrite``: the receipt has stayed open past the sweep's window and the target,
asked once more, does not hold the key): then the event ends STOPPED as the reconciler ends a
write it could neither find nor resend, reason ``run_terminated_write_unknown``, the receipt
left open as it is (the write IS unknown: no state says "not sent"), and one dead letter
``unreconciled_write`` with the reconciler's owner and plan, in the same transaction. The
receipt row is then locked too (``_RECEIPT_LOCKED_SQL``), so a sweep settling it at that moment
is read settled, not open beside its settle.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Literal

import asyncpg
from asyncpg.pool import PoolConnectionProxy

from adapters.postgres.dead_letters import DEAD_LETTER_SQL
from adapters.postgres.pgtext import pg_json, pg_text
from adapters.postgres.receipts import RECEIPT_COLUMNS
from adapters.postgres.steps import TRANSITION_SQL, step_args
from contracts import (
    TERMINAL_STATES,
    EventRef,
    EventState,
    FinalOutcome,
    Receipt,
    ReceiptStatus,
    StepRecord,
    Transition,
)
from contracts.actions import UNRECONCILED_CODE, UNRECONCILED_OWNER
from contracts.errors import ErrorClass

#: The state an end with no outcome is recorded as: nothing was sent and nothing will be
#: (docs/architecture.md, "States"): the same exit as a stop for consent or a kill switch.
CLOSED_STATE = EventState.STOPPED

#: How a run Temporal no longer knows ended, in the same words' place.
NOT_FOUND = "not found"
#: How the run ended (``tollgate.ops.review_ticket.ended_without_outcome``) -> the reason code.
REASON_CODES = {"terminated": "run_terminated", "failed": "run_failed",
                "timed out": "run_timed_out", "canceled": "run_canceled",
                NOT_FOUND: "run_not_found"}
#: Appended to the reason code when the end is read from a settled receipt.
AFTER_SEND = "_after_send"

#: Appended to the reason code when the end is an unresolved write's (``UnresolvedWrite``).
WRITE_UNKNOWN = "_write_unknown"
#: The states an event with an open receipt can be left in: the send's (EXECUTING; APPROVED
#: when a concurrent attempt opened the receipt and the step was not recorded yet) and the
#: reconciler's.
OPEN_FROM = {EventState.APPROVED, EventState.EXECUTING, EventState.UNKNOWN_WRITE,
             EventState.RECONCILING}

#: A settled receipt -> the end the run records after it (``FINAL_STATE`` of the send's result).
SENT_STATE = {ReceiptStatus.SUCCEEDED: EventState.SUCCEEDED,
              ReceiptStatus.REJECTED: EventState.REJECTED,
              ReceiptStatus.WOULD_SEND: EventState.STOPPED}
#: The states each of those ends is recorded from (docs/architecture.md, "States"): the send's
#: EXECUTING, the reconciler's RECONCILING (found, or its one resend refused by the target),
#: and APPROVED for a shadow send whose WOULD_SEND receipt an older worker opened with no
#: EXECUTING step (docs/rollout.md).
SENT_FROM = {EventState.SUCCEEDED: {EventState.EXECUTING, EventState.RECONCILING},
             EventState.REJECTED: {EventState.EXECUTING, EventState.RECONCILING},
             EventState.STOPPED: {EventState.APPROVED, EventState.EXECUTING}}

_ROW_SQL = """
SELECT workflow_id, tenant_id, event_id, event_type, entity_id, correlation_id, schema_version,
       payload_fingerprint, state, reason_code, last_seq, policy_version,
       now() - updated_at AS quiet
FROM events e WHERE workflow_id = $1 FOR UPDATE
"""
#: The event's receipt (one action per event). A settled one is final (settles are fenced and
#: never reopen it), so the end read from it stands; one settled just after this read was
#: read open, and is refused this time.
_RECEIPT_SQL = (f"SELECT {RECEIPT_COLUMNS}, now() - updated_at AS open_for FROM receipts"
                " WHERE workflow_id = $1 ORDER BY created_at DESC LIMIT 1")
#: The same, locked, for an unresolved write's end: a sweep settling the receipt at that moment
#: is waited for and read settled (then the close ends the event as that receipt says), never
#: read open beside it. Only then: an attempt of a terminated run's send may still settle
#: (receipt, then events row) while a close without that evidence runs, and locking in the
#: other order could deadlock the two; past the window no attempt is left.
_RECEIPT_LOCKED_SQL = _RECEIPT_SQL + " FOR UPDATE"


@dataclass(frozen=True)
class UnresolvedWrite:
    """The caller's evidence that an open receipt will not settle, and the dead letter to
    write: the receipt must not have changed for ``open_for`` (the sweep's window, or the
    target's lookup window if longer: no attempt of the send is still in flight and the sweep
    has had its look); ``looked_up``: the target was asked for the key just now and does not
    hold it (False: the target cannot be looked up at all). ``replay_input`` is None when the
    send could not be built again from what is stored; ``plan`` then says so."""

    open_for: timedelta
    looked_up: bool
    plan: str
    redacted_payload: dict[str, object]
    replay_input: dict[str, object] | None


@dataclass(frozen=True)
class Closing:
    """What ``close`` did: ``closed`` (the end written now), ``ended`` (terminal already:
    nothing written), ``no_record`` (no events row), ``write_unknown`` (its receipt is open),
    ``not_after_send`` (its receipt is settled, or open and ``unresolved`` given, but the row
    is in a state no send ends from),
    ``recent`` (a run Temporal does not know, whose row changed within ``quiet_for``),
    ``write_recent`` (an unresolved write whose receipt changed within its window)."""

    result: Literal["closed", "ended", "no_record", "write_unknown", "not_after_send",
                    "recent", "write_recent"]
    #: The state the row was in when read.
    state: str | None = None
    reason_code: str | None = None
    #: The end written (``closed`` only).
    to_state: str | None = None
    receipt_status: str | None = None
    #: How long the row (``recent``) or the open receipt (``write_recent``) had not changed.
    quiet: timedelta | None = None
    #: The unresolved write's dead letter (``closed`` as one), written now or found.
    dead_letter: int | None = None


class RunCloses:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def tenant_of(self, workflow_id: str) -> str | None:
        """The event's tenant (None: no record), read for the authority check."""
        return await self.pool.fetchval("SELECT tenant_id FROM events WHERE workflow_id = $1",
                                        workflow_id)

    async def close(self, workflow_id: str, *, ended: str, operator: str,
                    reason: str, quiet_for: timedelta | None = None,
                    unresolved: UnresolvedWrite | None = None) -> Closing:
        """Record the end of ``workflow_id``'s event, whose run ended ``ended`` with no outcome
        (the caller asked Temporal), by ``operator`` for ``reason``. ``ended`` is
        ``NOT_FOUND`` for a run Temporal does not know; then ``quiet_for`` (the namespace's
        retention) is how long the row must not have changed. ``unresolved``: end an open
        receipt's event as an unresolved write (the caller asked the target)."""
        code = REASON_CODES[ended]
        async with self.pool.acquire() as conn, conn.transaction():
            row = await conn.fetchrow(_ROW_SQL, workflow_id)
            if row is None:
                return Closing("no_record")
            state = EventState(row["state"])
            if state in TERMINAL_STATES:
                return Closing("ended", state.value, row["reason_code"])
            found = await conn.fetchrow(_RECEIPT_LOCKED_SQL if unresolved else _RECEIPT_SQL,
                                        workflow_id)
            receipt, open_for = None, timedelta(0)
            if found is not None:
                receipt = Receipt(**{k: v for k, v in found.items() if k != "open_for"})
                open_for = found["open_for"]
            to_state, unknown = CLOSED_STATE, None
            if receipt is not None and receipt.status not in SENT_STATE:
                if unresolved is None:
                    return Closing("write_unknown", state.value,
                                   receipt_status=receipt.status.value, quiet=open_for)
                if state not in OPEN_FROM:
                    return Closing("not_after_send", state.value,
                                   receipt_status=receipt.status.value)
                if open_for < unresolved.open_for:
                    return Closing("write_recent", state.value,
                                   receipt_status=receipt.status.value, quiet=open_for)
                unknown, code = unresolved, code + WRITE_UNKNOWN
            elif receipt is not None:
                to_state, code = SENT_STATE[receipt.status], code + AFTER_SEND
                if state not in SENT_FROM[to_state]:
                    return Closing("not_after_send", state.value,
                                   receipt_status=receipt.status.value)
            if ended == NOT_FOUND and (quiet_for is None or row["quiet"] <= quiet_for):
                return Closing("recent", state.value, quiet=row["quiet"])
            ref = EventRef(workflow_id=workflow_id, tenant_id=row["tenant_id"],
                           event_id=row["event_id"], event_type=row["event_type"],
                           entity_id=row["entity_id"], correlation_id=row["correlation_id"],
                           schema_version=row["schema_version"])
            outcome = FinalOutcome(workflow_id=workflow_id, tenant_id=row["tenant_id"],
                                   event_id=row["event_id"], state=to_state, receipt=receipt,
                                   reason_code=code, policy_version=row["policy_version"],
                                   payload_fingerprint=row["payload_fingerprint"])
            step = StepRecord(
                ref=ref, reason_code=code, policy_version=row["policy_version"],
                outcome=outcome, transitions=[Transition(
                    seq=row["last_seq"] + 1, from_state=state, to_state=to_state,
                    actor=f"operator:{pg_text(operator)}", reason=code)])
            await conn.fetchval(TRANSITION_SQL, *step_args(step))
            await conn.execute(
                "INSERT INTO audit (actor, action, target, detail) VALUES ($1,$2,$3,$4::jsonb)",
                pg_text(operator), "run_close", pg_text(workflow_id),
                pg_json({"reason": reason, "run_ended": ended, "from_state": state.value,
                         "to_state": to_state.value, "reason_code": code,
                         "tenant_id": row["tenant_id"],
                         **({"action_key": receipt.action_key,
                             "receipt_status": receipt.status.value} if receipt else {}),
                         **({"looked_up": unknown.looked_up} if unknown else {})}))
            dead_letter = None
            if unknown is not None and receipt is not None:
                dead_letter = await _dead_letter(conn, ref, receipt.action_key, unknown)
            return Closing("closed", state.value, code, to_state.value,
                           receipt.status.value if receipt else None, dead_letter=dead_letter)


async def _dead_letter(conn: PoolConnectionProxy, ref: EventRef, action_key: str,
                       unknown: UnresolvedWrite) -> int:
    """The reconciler's dead letter for the write, or the one already there (its own, if it
    wrote one before the run was terminated): one per (workflow id, code). One left REPLAYED
    stays so (no reopening actor): its replay may still be running (this command asks
    PostgreSQL alone, and a replay may wait out the target's lookup window), and a replay that
    stops reopens it itself (``dead_letter_write``)."""
    await conn.execute(
        DEAD_LETTER_SQL, pg_text(ref.workflow_id), ref.tenant_id, ref.event_id,
        ref.correlation_id, ErrorClass.UNKNOWN_WRITE.value, UNRECONCILED_CODE,
        CLOSED_STATE.value, UNRECONCILED_OWNER, unknown.plan, pg_json(unknown.redacted_payload),
        action_key, pg_json(unknown.replay_input) if unknown.replay_input else None, None)
    found = await conn.fetchval("SELECT id FROM dead_letters WHERE workflow_id = $1"
                                " AND error_code = $2", pg_text(ref.workflow_id),
                                UNRECONCILED_CODE)
    return int(found)
