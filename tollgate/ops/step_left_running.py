"""Whether a replay's run that has ended left one of its steps running (ADR 0070).

A run that is cancelled does not wait for the activity it asks to stop (the SDK's default,
``TRY_CANCEL``), and a terminated or timed-out one runs no code at all: the attempt under way
(the one keyed resend, or a lookup) goes on in its worker until it returns or its
start-to-close timeout passes, and may still reach the target. The run's history says which
step it left: one scheduled with no completion, failure, time-out or cancellation after it.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from temporalio.client import WorkflowHandle

#: The events that end an activity, each naming the scheduled event it ends.
_ENDS = ("activity_task_completed_event_attributes", "activity_task_failed_event_attributes",
         "activity_task_timed_out_event_attributes", "activity_task_canceled_event_attributes")


def longest_step() -> timedelta:
    """No attempt of a reconcile run's steps runs longer than this (their start-to-close
    timeouts: the resend's 30 s is the longest)."""
    from workflows.timeouts import EXECUTE_TIMEOUT, LOOKUP_TIMEOUT, STORE_TIMEOUT

    return max(EXECUTE_TIMEOUT, LOOKUP_TIMEOUT, STORE_TIMEOUT)


async def step_left_running(handle: WorkflowHandle[Any, Any], closed_at: datetime,
                            now: datetime) -> tuple[str, datetime] | None:
    """The step the run ended at ``closed_at`` left under way and until when it may still
    run, or None. Its history is read only within ``longest_step()`` of the close."""
    longest = longest_step()
    if now >= closed_at + longest:
        return None
    under_way: dict[int, tuple[str, timedelta]] = {}
    async for event in handle.fetch_history_events():
        which = event.WhichOneof("attributes")
        if which == "activity_task_scheduled_event_attributes":
            scheduled = event.activity_task_scheduled_event_attributes
            timeout = scheduled.start_to_close_timeout.ToTimedelta() \
                if scheduled.HasField("start_to_close_timeout") else longest
            under_way[event.event_id] = (scheduled.activity_type.name, timeout)
        elif which in _ENDS:
            under_way.pop(getattr(event, which).scheduled_event_id, None)
    # A workflow runs one step at a time; if several were left, the one that ends last.
    left = [(closed_at + timeout, name) for name, timeout in under_way.values()
            if now < closed_at + timeout]
    if not left:
        return None
    until, name = max(left)
    return name, until
