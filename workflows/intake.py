"""The producer's ``intake`` update of ProcessEventWorkflow: its answer and its validator.

Deterministic like any workflow code. The first delivery waits for validation and the
idempotency gate; a later one is a duplicate (the same payload) or a conflict (another one). A
later delivery whose answer is already known is refused by the validator instead
(``refuse_known_duplicate``): nothing of it reaches history, and the producer's ``submit()``
turns that refusal into the same ``duplicate`` answer (tollgate/intake/submit.py).
"""

from __future__ import annotations

from typing import Protocol

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from activities.intake import IntakeActivities
    from contracts import EventState, IntakeAck, IntakeRequest, IntakeResult
    from contracts.events import DUPLICATE_REFUSAL, DuplicateSeen
    from policies.keys import payload_fingerprint
    from workflows import timeouts as t
    from workflows.shape import taken

#: workflow.patched() id (never reuse or remove while older histories may run).
COUNT_DUPLICATE_DELIVERIES = "count-duplicate-deliveries"


class Intake(Protocol):
    _intake: IntakeResult | None
    _intake_calls: int
    _fingerprint: str | None
    _state: EventState


def refuse_known_duplicate(wf: Intake, delivery: IntakeRequest) -> None:
    """Raise (the update is rejected, unwritten) for a repeat of the first delivery's payload
    once the answer is known to be "duplicate" and one repeat was already answered (and
    counted) by the handler: a retry storm writes one update to history, not thousands.
    Pure: no command, no I/O, no state changed."""
    intake = wf._intake
    if intake is None or wf._intake_calls < 2 or intake.status not in ("accepted", "duplicate"):
        return
    if payload_fingerprint(delivery.raw) != wf._fingerprint:
        return  # a conflict: answered (and quarantined) through the handler
    raise ApplicationError("this event was already delivered", wf._state.value,
                           type=DUPLICATE_REFUSAL, non_retryable=True)


async def answer(wf: Intake, delivery: IntakeRequest) -> IntakeAck:
    """Answers the producer as soon as validation and the idempotency gate are done. A later
    delivery with the same key but another payload is a conflict, not a duplicate."""
    wf._intake_calls += 1
    first = wf._intake_calls == 1
    await workflow.wait_condition(lambda: wf._intake is not None)
    intake = wf._intake
    assert intake is not None
    wf_id = workflow.info().workflow_id
    if not first and payload_fingerprint(delivery.raw) != wf._fingerprint:
        return IntakeAck(status="invalid", workflow_id=wf_id, state=wf._state,
                         reason_code="idempotency_conflict",
                         message="this idempotency_key was already used with another payload")
    if intake.status in ("quarantined", "dead_lettered", "superseded"):
        # Each is final for this delivery: the producer must fix or stop sending it.
        return IntakeAck(status="invalid", workflow_id=wf_id, state=wf._state,
                         reason_code=intake.reason_code, message=intake.message)
    if intake.status == "duplicate" or not first:
        if not first and intake.event is not None and taken(
                COUNT_DUPLICATE_DELIVERIES):
            # Only this handler sees the delivery; the count must outlive the worker
            # (docs/metrics.md). The gate counted this run's own first delivery.
            await workflow.execute_local_activity_method(
                IntakeActivities.count_duplicate,
                DuplicateSeen(tenant_id=intake.event.tenant_id,
                              stage="after_close" if intake.previous else "in_flight"),
                start_to_close_timeout=t.STORE_TIMEOUT, retry_policy=t.STORE_RETRY)
        return IntakeAck(status="duplicate", workflow_id=wf_id, state=wf._state,
                         reason_code="duplicate", previous=intake.previous)
    return IntakeAck(status="accepted", workflow_id=wf_id, state=wf._state,
                     reason_code=intake.reason_code, message=intake.message)
