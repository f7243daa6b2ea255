"""A step that failed for good goes to an operator, not back round (workflows/failures.py)."""

from __future__ import annotations

from temporalio import activity

from activities.execute import executing_step, failed_before_receipt
from adapters.ports.stores.controls import DeadLetterQueue
from contracts import StepFailure
from policies.redaction import redact

#: Who reads the dead letter, and what they do, per failed step. Nothing is retried from the
#: CLI (`tollgate ops dlq replay` refuses with the plan): the event's history says what happened.
_PLANS = {
    "load_context": (
        "integrations-oncall",
        "Reading the customer record failed for good; nothing was drafted or sent. Once the "
        "CRM answers for this customer again, the producer submits the event again under a new "
        "event id."),
    "execute_action": (
        "messaging-oncall",
        "The send step gave up; a receipt it left open is settled by the receipt sweep. Read "
        "the event (`tollgate trace`) and its receipt; while the receipt is open, wait for the "
        "sweep (`tollgate ops sweep`): when the target holds the write, the message went out, "
        "the event ends SUCCEEDED and this dead letter closes. Otherwise, if the approval is "
        "on record and the customer still needs the message, submit the event again under a "
        "new event id."),
}


class DeadLetterActivities:
    def __init__(self, ops: DeadLetterQueue) -> None:
        self.ops = ops

    @activity.defn
    async def dead_letter_step(self, failure: StepFailure) -> None:
        """Once per run and code (the table's unique key): a retried call adds nothing.

        A send step that failed before recording its APPROVED -> EXECUTING (refused, the
        action token's or the mint's refusal too, or its retries spent before the receipt) has
        it written here, under the number the run gave it (``failure.seq``), in the dead
        letter's statement: the run counted it and records EXECUTING -> DEAD_LETTERED next, so
        PostgreSQL's transitions have no gap. A step already recorded is left as it is."""
        ref, action = failure.ref, failure.action
        step = None
        if action is not None and failure.seq is not None:
            step = executing_step(action, failure.seq, failed_before_receipt(failure.code))
        owner, plan = _PLANS[failure.step]
        facts = {"step": failure.step, "tenant_id": ref.tenant_id, "event_id": ref.event_id}
        if action is not None:
            facts |= {"action_key": action.action_key, "adapter": action.adapter}
        await self.ops.dead_letter(
            workflow_id=ref.workflow_id, error_class=failure.error_class,
            error_code=failure.code, state="DEAD_LETTERED", owner=owner, replay_plan=plan,
            redacted_payload=redact(facts), tenant_id=ref.tenant_id, event_id=ref.event_id,
            correlation_id=ref.correlation_id,
            action_key=action.action_key if action is not None else None, step=step,
        )
