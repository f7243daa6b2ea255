"""The send step of a ProcessEventWorkflow run: one approved action, held while a kill switch
covers it; a send step that fails for good is dead-lettered (workflows/failures.py)."""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from activities.execute import ExecuteActivities
    from contracts import ExecuteRequest, ExecuteResult, StepFailure
    from workflows import timeouts as t
    from workflows.failures import dead_letter_failure


async def send(request: ExecuteRequest, queue: str | None) -> ExecuteResult | StepFailure:
    """Call the send step until no kill switch holds it; a step that failed for good comes back
    as the ``StepFailure`` already dead-lettered."""
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
            failure = await dead_letter_failure(action.ref, "execute_action", err, action=action)
            if failure is None:
                raise
            return failure
        if result.status != "held":
            return result
        await workflow.sleep(t.KILL_SWITCH_RECHECK)
