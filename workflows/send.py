"""The send step of a ProcessEventWorkflow run: one approved action, held while a kill switch
covers it, and what happens when the step fails for good.

A send step that fails for good (its retries spent, a refusal such as ``no_approval_on_record``)
no longer fails the run: it is dead-lettered for an operator and the event ends DEAD_LETTERED,
so every accepted event still ends in exactly one state an operator can find. Deterministic like
any workflow code: the failure is read from the history, not from the outside world.
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError, CancelledError, TimeoutError

with workflow.unsafe.imports_passed_through():
    from activities.execute import ExecuteActivities
    from activities.reconcile import ReconcileActivities
    from contracts import ExecuteRequest, ExecuteResult, SendFailure
    from workflows import timeouts as t

#: workflow.patched() id: a send step that fails for good is dead-lettered (runs before it
#: failed, and replay keeps them failing: tests/replay, ``pre-send-dlq-*``).
SEND_FAILURE_DEAD_LETTERS = "send-failure-dead-letters"


async def send(request: ExecuteRequest, queue: str | None) -> ExecuteResult | SendFailure:
    """Call the send step until no kill switch holds it; a step that failed for good comes back
    as the ``SendFailure`` already dead-lettered."""
    action = request.action
    while True:
        try:
            result: ExecuteResult = await workflow.execute_activity_method(
                ExecuteActivities.execute_action, request, task_queue=queue,
                start_to_close_timeout=t.EXECUTE_TIMEOUT, heartbeat_timeout=t.EXECUTE_HEARTBEAT,
                retry_policy=t.EXECUTE_RETRY,
                summary=f"send via {action.adapter} with the business key (receipt first)",
            )
        except ActivityError as err:
            if isinstance(err.cause, CancelledError) or not workflow.patched(
                    SEND_FAILURE_DEAD_LETTERS):
                raise
            failure = _failure(request, err)
            await workflow.execute_activity_method(
                ReconcileActivities.dead_letter_send, failure,
                start_to_close_timeout=t.STORE_TIMEOUT, retry_policy=t.STORE_RETRY,
                summary=f"the send step failed ({failure.code}): dead letter for an operator",
            )
            return failure
        if result.status != "held":
            return result
        await workflow.sleep(t.KILL_SWITCH_RECHECK)


def _failure(request: ExecuteRequest, err: ActivityError) -> SendFailure:
    """The taxonomy's class and code travel on the ApplicationError (``activities.errors``); a
    step that never answered has none."""
    cause = err.cause
    if isinstance(cause, ApplicationError) and cause.type:
        code = str(cause.details[0]) if cause.details else cause.type
        return SendFailure(action=request.action, error_class=cause.type, code=code)
    if isinstance(cause, TimeoutError):
        return SendFailure(action=request.action, error_class="timeout", code="send_timed_out")
    return SendFailure(action=request.action, error_class="retryable", code="send_failed")
