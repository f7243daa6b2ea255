"""FanOutWorkflow and ConsumeEventWorkflow: one event, one child per subscribed consumer
(docs/fan-out.md).

    FanOutWorkflow  id fan-out/{event_id}
      for each subscription of the event type (from the snapshot in the input):
        ConsumeEventWorkflow  id consume/{event_id}/{consumer}   (its own retry policy)
          deliver_event  --ok-->  delivered | duplicate
                         --retries exhausted / final error-->  dead_letter_event
          (a consumer that acts, ``through: control_core``: a child ProcessEvent instead of
           deliver_event, workflows/consumer_acts.py)

Children are started together and awaited together, so a slow consumer holds only its own
child; they are ABANDONed on parent close, so a cancelled fan-out never cancels a delivery half
way. The producer does not wait for any of this: it returns once the fan-out start is durable.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError
from temporalio.workflow import ParentClosePolicy

with workflow.unsafe.imports_passed_through():
    from activities.fanout import FanOutActivities
    from contracts.errors import NON_RETRYABLE
    from contracts.fanout import (
        ConsumeRequest,
        ConsumeResult,
        DeadLetterRequest,
        FanOutRequest,
        FanOutResult,
        Subscription,
    )
    from policies.subscriptions import consumers_for
    from workflows import timeouts as t
    from workflows.consumer_acts import acts_through_control_core, hand_over

_FINAL_TYPES = tuple(sorted(c.value for c in NON_RETRYABLE))


def consume_id(event_id: str, consumer: str) -> str:
    """The (event id, consumer) idempotency key as a workflow id: one delivery run at a time."""
    return f"consume/{event_id}/{consumer}"


def _retry_policy(sub: Subscription) -> RetryPolicy:
    """The consumer's own policy, from the versioned subscription file."""
    return RetryPolicy(initial_interval=timedelta(seconds=sub.initial_interval_s),
                       backoff_coefficient=2.0,
                       maximum_interval=timedelta(seconds=sub.max_interval_s),
                       maximum_attempts=sub.max_attempts,
                       non_retryable_error_types=list(_FINAL_TYPES))


def _retry_state(err: ActivityError | ApplicationError) -> str:
    """Why the retries stopped (attempts exhausted, a final error class, a timeout). A local
    activity's failure may come unwrapped, without a retry state: a final class says why."""
    if isinstance(err, ApplicationError):
        return "non_retryable_failure" if err.non_retryable else "unknown"
    state = err.retry_state
    return state.name.lower() if state is not None else "unknown"


@workflow.defn
class ConsumeEventWorkflow:
    @workflow.run
    async def run(self, request: ConsumeRequest) -> ConsumeResult:
        sub = request.subscription
        try:
            if acts_through_control_core(request):
                return await hand_over(request, _retry_policy(sub))
            return await workflow.execute_activity_method(
                FanOutActivities.deliver_event, request,
                start_to_close_timeout=timedelta(seconds=sub.timeout_s),
                retry_policy=_retry_policy(sub))
        except (ActivityError, ApplicationError) as err:  # the hand-over's is a local activity
            cause = err.cause if isinstance(err, ActivityError) else err
            error = (f"{cause.type}: {cause.message}" if isinstance(cause, ApplicationError)
                     else f"retryable: {type(cause).__name__}")
            return await workflow.execute_activity_method(
                FanOutActivities.dead_letter_event,
                DeadLetterRequest(event=request.event, consumer=sub.consumer,
                                  retry_state=_retry_state(err), error=error[:500]),
                start_to_close_timeout=t.STORE_TIMEOUT, retry_policy=t.STORE_RETRY)


@workflow.defn
class FanOutWorkflow:
    @workflow.run
    async def run(self, request: FanOutRequest) -> FanOutResult:
        event = request.event
        handles = [
            await workflow.start_child_workflow(
                ConsumeEventWorkflow.run,
                ConsumeRequest(event=event, subscription=sub,
                               subscriptions_version=request.subscriptions.version),
                id=consume_id(event.event_id, sub.consumer),
                parent_close_policy=ParentClosePolicy.ABANDON)
            for sub in consumers_for(request.subscriptions, event.event_type)
        ]
        results = await asyncio.gather(*handles)
        return FanOutResult(event_id=event.event_id,
                            subscriptions_version=request.subscriptions.version,
                            results=list(results))
