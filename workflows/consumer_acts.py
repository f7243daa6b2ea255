"""A fan-out consumer whose work is a customer-facing side effect (the order confirmation of
``ORDER_PLACED``) runs it through the control core (docs/fan-out.md, "Consumers that act").

    ConsumeEventWorkflow consume/{event_id}/notify
      control_core_event (local activity: the signed envelope, keyed (event_id, consumer))
      child ProcessEvent  event/{tenant}/{event_id}.notify   (REJECT_DUPLICATE, ABANDON)
        context, draft, policy gate, review where the policy asks, send with receipt

The consumer's run ends once the child has started (``handed_over``): the review may take a
day, and the fan-out's other consumers never wait for it. The child is abandoned, not
cancelled, when the consumer's run closes. A child that already exists (a replayed consumer, a
second fan-out of the same event) is a duplicate: nothing is started or sent again, and the
ProcessEvent's own idempotency gate would say the same. Deterministic: the workflow id comes
from the event's business key, never a run id.
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.common import RetryPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.workflow import ParentClosePolicy

with workflow.unsafe.imports_passed_through():
    from activities.consumer_intake import ConsumerIntakeActivities
    from contracts.fanout import ConsumeRequest, ConsumeResult
    from policies.keys import event_workflow_id
    from policies.subscriptions import control_core_key
    from workflows import timeouts as t
    from workflows.process_event import ProcessEventWorkflow

#: workflow.patched() id of the control-core branch. The branch is chosen by the subscription
#: snapshot in the run's input (``through``), which no run from before it carries.
CONSUMER_ACTS = "consumer-acts-through-control-core"


def child_workflow_id(request: ConsumeRequest) -> str:
    event = request.event
    return event_workflow_id(event.tenant_id,
                             control_core_key(event.event_id, request.subscription.consumer))


def acts_through_control_core(request: ConsumeRequest) -> bool:
    """Pure but for the patch marker it records when the branch is taken."""
    return (request.subscription.through == "control_core"
            and workflow.patched(CONSUMER_ACTS))


async def hand_over(request: ConsumeRequest, retry_policy: RetryPolicy) -> ConsumeResult:
    """Start the consumer's child ProcessEvent (raises ``ActivityError`` when the envelope
    cannot be built, after the consumer's own ``retry_policy``: the caller dead-letters it for
    this consumer alone)."""
    sub = request.subscription
    intake = await workflow.execute_local_activity_method(
        ConsumerIntakeActivities.control_core_event, request,
        start_to_close_timeout=t.STORE_TIMEOUT, retry_policy=retry_policy)
    child_id = child_workflow_id(request)
    try:
        await workflow.start_child_workflow(
            ProcessEventWorkflow.run, intake, id=child_id,
            id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
            parent_close_policy=ParentClosePolicy.ABANDON)
    except WorkflowAlreadyStartedError:
        return ConsumeResult(consumer=sub.consumer, status="duplicate", workflow_id=child_id)
    return ConsumeResult(consumer=sub.consumer, status="handed_over", workflow_id=child_id)
