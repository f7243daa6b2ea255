"""What one finished event's history holds: the shape the bench compares across pipelines, and
where its bytes are (``bytes_by_event``: the server stores and moves every one of them)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client


async def history_shapes(client: Client, samples: dict[str, list[str]]) -> dict[str, Any]:
    """For each pipeline, the counts of its first sampled workflow's history."""
    shapes: dict[str, Any] = {}
    for pipeline, wf_ids in samples.items():
        found = []
        for wf_id in wf_ids:
            history = await client.get_workflow_handle(wf_id).fetch_history()
            kinds = Counter(EventType.Name(e.event_type) for e in history.events)
            sizes: Counter[str] = Counter()
            for e in history.events:
                sizes[EventType.Name(e.event_type).removeprefix("EVENT_TYPE_").lower()] += \
                    e.ByteSize()
            found.append({
                "history_events": len(history.events),
                "history_bytes": sum(e.ByteSize() for e in history.events),
                "largest_event_bytes": max(e.ByteSize() for e in history.events),
                "workflow_tasks": kinds["EVENT_TYPE_WORKFLOW_TASK_COMPLETED"],
                "activities": kinds["EVENT_TYPE_ACTIVITY_TASK_SCHEDULED"],
                "local_activities": sum(  # patch markers are markers too
                    1 for e in history.events
                    if e.marker_recorded_event_attributes.marker_name
                    == "core_local_activity"),
                "search_attribute_upserts":
                    kinds["EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES"],
                "signals": kinds["EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED"],
                "updates": kinds["EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED"],
                "bytes_by_event": dict(sizes.most_common()),
            })
        shapes[pipeline] = found[0] if found else None
    return shapes
