"""What the slowest event of a phase waited on, read from its history.

A round ends when its last event does, so one event that stalls for seconds costs the whole
round's throughput (the fifth session's parked round at 1.75 events/s, one event 20.4 s end to
end). The figures alone cannot say why; the event's history can: a workflow or activity task
that timed out or failed is an event of its own, and the longest gap between two consecutive
events names the step the run sat in. The run's own span (first history event to last) beside
the end-to-end time says whether the wait was in the run at all: run AK's skeleton event of 20.2 s
had 35 history events and no gap over 93 ms (at most 3.2 s of history); the rest was outside the
run, as long as the server's 20 s history long poll: a close the poll was not told of. The bench
now waits with ``run_result`` (ADR 0083), which learns such a close from ``describe()`` within
seconds and counts it; ``missed_line`` prints the count.
"""

from __future__ import annotations

from collections import Counter
from itertools import pairwise
from typing import Any

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

#: History events that mean a task was lost, refused or retried.
TROUBLE = ("WORKFLOW_TASK_TIMED_OUT", "WORKFLOW_TASK_FAILED", "ACTIVITY_TASK_TIMED_OUT",
           "ACTIVITY_TASK_FAILED", "ACTIVITY_TASK_CANCELED")


def _name(event_type: int) -> str:
    return EventType.Name(event_type).removeprefix("EVENT_TYPE_")  # type: ignore[arg-type]


async def slowest_history(client: Client, workflow_id: str, e2e_s: float) -> dict[str, Any]:
    """``{"workflow_id", "e2e_ms", "history_ms", "history_events", "trouble", "longest_gap"}``
    (``history_ms``: first history event to last): trouble
    counts the task time-outs and failures, the gap is the longest wait between consecutive
    history events, with the events at both ends and the activity attempt where one is
    recorded (a retried local activity shows only in its marker's attempt)."""
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    events = list(history.events)
    kinds = Counter(_name(e.event_type) for e in events)
    gap: dict[str, Any] | None = None
    for before, after in pairwise(events):
        ms = (after.event_time.ToMilliseconds() - before.event_time.ToMilliseconds())
        if gap is None or ms > gap["ms"]:
            gap = {"ms": ms, "after": _name(before.event_type), "before": _name(after.event_type)}
    attempts = [e.activity_task_started_event_attributes.attempt for e in events
                if e.HasField("activity_task_started_event_attributes")]
    span = (events[-1].event_time.ToMilliseconds() - events[0].event_time.ToMilliseconds()
            if events else 0)
    return {"workflow_id": workflow_id, "e2e_ms": round(e2e_s * 1000, 1), "history_ms": span,
            "history_events": len(events),
            "trouble": {k: kinds[k] for k in TROUBLE if kinds[k]},
            "most_activity_attempts": max(attempts, default=0),
            "longest_gap": gap}


def slowest_line(pipeline: str, found: dict[str, Any] | None) -> str | None:
    """One report line for a pipeline's slowest event, or None when none was read."""
    if not found:
        return None
    gap = found.get("longest_gap") or {}
    trouble = ", ".join(f"{k} {v}" for k, v in found["trouble"].items()) or "no task lost"
    span = found.get("history_ms")  # absent from older --json
    within = "" if span is None else f", {span / 1000:.1f} s of it in the run's history"
    return (f"  {pipeline:10} slowest event {found['e2e_ms'] / 1000:.1f} s end to end{within}: "
            f"{trouble}; activity attempts at most {found['most_activity_attempts']}; longest "
            f"gap {gap.get('ms', 0) / 1000:.1f} s, {gap.get('after', '-')} -> "
            f"{gap.get('before', '-')}")


def missed_line(pipeline: str, summary: dict[str, Any]) -> str | None:
    """One report line for a pipeline's missed close notifications (ADR 0083), or None."""
    missed = summary.get("missed_closes") or []  # absent from older --json
    if not missed:
        return None
    late = max(m["learned_ms"] - m["closed_ms"] for m in missed) / 1000
    return (f"  {pipeline:10} missed close notifications: {len(missed)} (the run closed, its "
            f"result's long poll was not told; learned from describe() up to {late:.1f} s "
            "later; --json: missed_closes)")
