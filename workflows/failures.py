"""A step of a ProcessEventWorkflow run that fails for good: dead-lettered, not a failed run.

Reading the customer record (its retries spent through a CRM outage, a CRM answering 4xx or
another customer's record) and the send step (its retries spent, a refusal such as
``no_approval_on_record``) end the event DEAD_LETTERED with a dead letter an operator finds
with `tollgate ops dlq list`, so every accepted event still ends in exactly one state.
Deterministic like any workflow code: the failure is read from the history.
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError, CancelledError, TimeoutError

with workflow.unsafe.imports_passed_through():
    from activities.dead_letters import DeadLetterActivities
    from contracts import ActionRequest, EventRef, StepFailure
    from contracts.actions import FailedStep
    from workflows import timeouts as t
    from workflows.shape import taken

#: workflow.patched() id: a step that fails for good is dead-lettered. Runs started before it
#: failed, and replay keeps them failing (tests/replay, ``pre-step-dlq-*``).
STEP_FAILURE_DEAD_LETTERS = "step-failure-dead-letters"

async def dead_letter_failure(ref: EventRef, step: FailedStep,
                              err: ActivityError | ApplicationError, *,
                              action: ActionRequest | None = None,
                              seq: int | None = None) -> StepFailure | None:
    """The failure, dead-lettered; None when the run must fail as before (cancelled, or a run
    recorded before the patch). A local activity's failure may arrive as the ApplicationError
    itself, not wrapped in an ActivityError. ``seq``: the send step's number (``StepFailure``);
    the activity's input only, no command changes."""
    cause = err.cause if isinstance(err, ActivityError) else err
    if isinstance(cause, CancelledError) or not taken(STEP_FAILURE_DEAD_LETTERS):
        return None
    failure = _failure(ref, step, cause, action, seq)
    await workflow.execute_activity_method(
        DeadLetterActivities.dead_letter_step, failure,
        start_to_close_timeout=t.STORE_TIMEOUT, retry_policy=t.STORE_RETRY,
        summary=f"{step} failed ({failure.code}): dead letter for an operator",
    )
    return failure


def _failure(ref: EventRef, step: FailedStep, cause: BaseException | None,
             action: ActionRequest | None, seq: int | None) -> StepFailure:
    """The taxonomy's class and code travel on the ApplicationError (``activities.errors``); a
    step that never answered has none."""
    error_class, code = "retryable", f"{step}_failed"
    if isinstance(cause, ApplicationError) and cause.type:
        error_class = cause.type
        code = str(cause.details[0]) if cause.details else cause.type
    elif isinstance(cause, TimeoutError):
        error_class, code = "timeout", f"{step}_timed_out"
    return StepFailure(ref=ref, step=step, error_class=error_class, code=code, action=action,
                       seq=seq)
