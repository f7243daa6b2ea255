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
the second finds it terminal and writes nothing. An event with a receipt is never closed here:
its send was started (the receipt row is written before the call), and STOPPED would say that
nothing was sent; the receipt is settled by the sweep and the reconciler first.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Literal

import asyncpg

from adapters.postgres.pgtext import pg_json, pg_text
from adapters.postgres.steps import TRANSITION_SQL, step_args
from contracts import TERMINAL_STATES, EventRef, EventState, FinalOutcome, StepRecord, Transition

#: The state an end with no outcome is recorded as: nothing was sent and nothing will be
#: (docs/architecture.md, "States"): the same exit as a stop for consent or a kill switch.
CLOSED_STATE = EventState.STOPPED

#: How a run Temporal no longer knows ended, in the same words' place.
NOT_FOUND = "not found"
#: How the run ended (``tollgate.ops.review_ticket.ended_without_outcome``) -> the reason code.
REASON_CODES = {"terminated": "run_terminated", "failed": "run_failed",
                "timed out": "run_timed_out", "canceled": "run_canceled",
                NOT_FOUND: "run_not_found"}

_ROW_SQL = """
SELECT workflow_id, tenant_id, event_id, event_type, entity_id, correlation_id, schema_version,
       payload_fingerprint, state, reason_code, last_seq, policy_version,
       now() - updated_at AS quiet,
       (SELECT status FROM receipts r WHERE r.workflow_id = e.workflow_id
        ORDER BY created_at DESC LIMIT 1) AS receipt_status
FROM events e WHERE workflow_id = $1 FOR UPDATE
"""


@dataclass(frozen=True)
class Closing:
    """What ``close`` did: ``closed`` (the end written now), ``ended`` (terminal already:
    nothing written), ``no_record`` (no events row), ``send_started`` (a receipt exists),
    ``recent`` (a run Temporal does not know, whose row changed within ``quiet_for``)."""

    result: Literal["closed", "ended", "no_record", "send_started", "recent"]
    #: The state the row was in when read.
    state: str | None = None
    reason_code: str | None = None
    receipt_status: str | None = None
    #: How long the row had not changed (``recent`` only).
    quiet: timedelta | None = None


class RunCloses:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def close(self, workflow_id: str, *, ended: str, operator: str,
                    reason: str, quiet_for: timedelta | None = None) -> Closing:
        """Record the end of ``workflow_id``'s event, whose run ended ``ended`` with no outcome
        (the caller asked Temporal), by ``operator`` for ``reason``. ``ended`` is
        ``NOT_FOUND`` for a run Temporal does not know; then ``quiet_for`` (the namespace's
        retention) is how long the row must not have changed."""
        code = REASON_CODES[ended]
        async with self.pool.acquire() as conn, conn.transaction():
            row = await conn.fetchrow(_ROW_SQL, workflow_id)
            if row is None:
                return Closing("no_record")
            state = EventState(row["state"])
            if state in TERMINAL_STATES:
                return Closing("ended", state.value, row["reason_code"])
            if row["receipt_status"] is not None:
                return Closing("send_started", state.value,
                               receipt_status=row["receipt_status"])
            if ended == NOT_FOUND and (quiet_for is None or row["quiet"] <= quiet_for):
                return Closing("recent", state.value, quiet=row["quiet"])
            ref = EventRef(workflow_id=workflow_id, tenant_id=row["tenant_id"],
                           event_id=row["event_id"], event_type=row["event_type"],
                           entity_id=row["entity_id"], correlation_id=row["correlation_id"],
                           schema_version=row["schema_version"])
            outcome = FinalOutcome(workflow_id=workflow_id, tenant_id=row["tenant_id"],
                                   event_id=row["event_id"], state=CLOSED_STATE,
                                   reason_code=code, policy_version=row["policy_version"],
                                   payload_fingerprint=row["payload_fingerprint"])
            step = StepRecord(
                ref=ref, reason_code=code, policy_version=row["policy_version"],
                outcome=outcome, transitions=[Transition(
                    seq=row["last_seq"] + 1, from_state=state, to_state=CLOSED_STATE,
                    actor=f"operator:{pg_text(operator)}", reason=code)])
            await conn.fetchval(TRANSITION_SQL, *step_args(step))
            await conn.execute(
                "INSERT INTO audit (actor, action, target, detail) VALUES ($1,$2,$3,$4::jsonb)",
                pg_text(operator), "run_close", pg_text(workflow_id),
                pg_json({"reason": reason, "run_ended": ended, "from_state": state.value,
                         "to_state": CLOSED_STATE.value, "reason_code": code,
                         "tenant_id": row["tenant_id"]}))
            return Closing("closed", state.value, code)
