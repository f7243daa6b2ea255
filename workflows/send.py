"""The send step of a ProcessEventWorkflow run: one approved action, held while a kill switch
covers it; a send step that fails for good is dead-lettered (workflows/failures.py).

While held the run waits for a ``wake`` (the switch's reopen sends it) or the fallback timer;
past its history budget it hands back ``BUDGET_SPENT`` and the run continues as new, resuming
here (workflows/budget.py)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Final, Literal

from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from activities.execute import ExecuteActivities
    from contracts import ExecuteRequest, ExecuteResult, StepFailure
    from contracts.search_attributes import held_by_kill_switch
    from workflows import timeouts as t
    from workflows.failures import dead_letter_failure
    from workflows.holds import Hold

#: What ``send`` returns when the run must continue as new before it looks again.
BUDGET_SPENT: Final = "budget_spent"


#: A fresh action token for the same approval (``with_action_token``, bound by the caller).
Refresh = Callable[[ExecuteRequest], Awaitable[ExecuteRequest | StepFailure]]


async def send(request: ExecuteRequest, queue: str | None, hold: Hold,
               refresh: Refresh) -> ExecuteResult | StepFailure | Literal["budget_spent"]:
    """Call the send step until no kill switch holds it; a step that failed for good comes back
    as the ``StepFailure`` already dead-lettered. After each hold the approval's token is minted
    again (ADR 0027): a hold may outlast a token's life, and the approval still stands."""
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
            hold.release()
            failure = await dead_letter_failure(action.ref, "execute_action", err, action=action,
                                                seq=request.seq)
            if failure is None:
                raise
            return failure
        if result.status != "held":
            hold.release()
            return result
        keys = held_by_kill_switch(action.adapter, action.ref.tenant_id)
        if await hold.wait(keys, t.KILL_SWITCH_RECHECK, t.KILL_SWITCH_RECHECK):
            return BUDGET_SPENT
        fresh = await refresh(request)
        if isinstance(fresh, StepFailure):
            hold.release()
            return fresh
        request = fresh
