"""Publish one business event to every subscribed consumer (docs/fan-out.md).

The producer's answer is the fan-out start: durable, then returned. It never waits for a
consumer. The workflow id ``fan-out/{event_id}`` with REJECT_DUPLICATE makes a second publish of
the same event (a broker redelivery, a producer retry) a duplicate, never a second run.
"""

from __future__ import annotations

from typing import Literal

from temporalio.client import Client
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError

from contracts.fanout import BusinessEvent, FanOutRequest, SubscriptionSet
from policies.keys import fan_out_id
from policies.subscriptions import load_subscriptions
from tollgate.intake.visibility import event_attributes

#: The fan-out workflow, by name (``workflows/fan_out.py``): importing it for its method reference
#: brought every activity of the fan-out and of the event pipeline it hands over to into the
#: broker intake. tests/test_workflow_names.py holds the name to the workflow's definition.
FAN_OUT_WORKFLOW = "FanOutWorkflow"


async def publish_event(client: Client, task_queue: str, event: BusinessEvent,
                        subscriptions: SubscriptionSet | None = None
                        ) -> Literal["accepted", "duplicate"]:
    """Start the fan-out of ``event`` by the newest subscription file (or the one given)."""
    subs = subscriptions or load_subscriptions()
    request = FanOutRequest(event=event, subscriptions=subs)
    try:
        await client.start_workflow(
            FAN_OUT_WORKFLOW, request,
            id=fan_out_id(event.event_id), task_queue=task_queue,
            id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
            # Findable by tenant and type at once, as an event's run is (ADR 0053).
            search_attributes=event_attributes(event.tenant_id, event.event_type))
    except WorkflowAlreadyStartedError:
        return "duplicate"
    return "accepted"
