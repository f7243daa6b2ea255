"""Each ``--variant`` of the same-shape skeleton differs from it by its one difference and by
nothing else (tollgate/bench/variant.py), and the skeleton itself keeps its shape: otherwise
a variant's server CPU would measure more than what it is named for."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.testing import WorkflowEnvironment

from tests.eventually import eventually
from tollgate.bench.baseline import AWAITING_REVIEW, WAITING
from tollgate.bench.history import history_shapes
from tollgate.bench.pipeline import event_outcome, submit_event
from tollgate.bench.reviewer import Reviewer
from tollgate.bench.tally import Tally
from tollgate.bench.variants import PIPELINES
from tollgate.bench.worker import baseline_workers

RAW = '{"event": "' + "e" * 700 + '"}'  # about a bench event's size


async def _one_event(env: WorkflowEnvironment, pipeline: str) -> tuple[dict[str, Any], Any]:
    client, wf_id = env.client, f"bench-{pipeline}/acme/{uuid.uuid4().hex[:8]}"
    async with baseline_workers(client, pipeline, 0.0):
        assert await submit_event(client, "unused", pipeline, wf_id, RAW) == "accepted"
        handle = client.get_workflow_handle(wf_id)

        async def waiting() -> bool:  # decided once it waits, as the listing finds it
            found = (await handle.describe()).typed_search_attributes.get(WAITING)
            return found == AWAITING_REVIEW

        await eventually(waiting, f"{wf_id} waiting for review")
        tally = Tally()
        await Reviewer(client, pipeline, tally)._decide(wf_id, set())  # as the reviewer would
        assert tally.reviewer["approved"] == 1
        assert (await event_outcome(client, pipeline, wf_id))[0] == "SUCCEEDED"
    shape = (await history_shapes(client, {pipeline: [wf_id]}))[pipeline]
    return shape, await client.get_workflow_handle(wf_id).fetch_history()


def _send_queue(history: Any) -> str:
    scheduled = [e.activity_task_scheduled_event_attributes for e in history.events
                 if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED]
    return str(scheduled[-1].task_queue.name)


def _read_queue(history: Any) -> str:
    scheduled = [e.activity_task_scheduled_event_attributes for e in history.events
                 if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED]
    return str(scheduled[0].task_queue.name)


COUNTS = ("history_events", "workflow_tasks", "activities", "local_activities",
          "search_attribute_upserts", "signals", "updates")


@pytest.fixture(scope="module")
async def skeleton(dev_server: WorkflowEnvironment) -> tuple[dict[str, Any], Any]:
    return await _one_event(dev_server, "same-shape")


async def test_the_skeleton_keeps_its_shape(skeleton: tuple[dict[str, Any], Any]) -> None:
    shape, history = skeleton
    assert {k: shape[k] for k in COUNTS} == {
        "history_events": 33, "workflow_tasks": 5, "activities": 3, "local_activities": 3,
        "search_attribute_upserts": 1, "signals": 1, "updates": 1}
    assert "timer_started" not in shape["bytes_by_event"]
    # The decision and the intake's update carry nothing: no payload where the skeleton had none.
    signal, = (e.workflow_execution_signaled_event_attributes for e in history.events
               if e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED)
    update, = (e.workflow_execution_update_accepted_event_attributes for e in history.events
               if e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED)
    assert not signal.input.payloads and not update.accepted_request.input.args.payloads
    assert _send_queue(history) == PIPELINES["same-shape"].queue


@pytest.mark.parametrize(("variant", "changed"), [
    ("bytes", {}),
    ("update", {"signals": 0, "updates": 2, "history_events": 34}),
    ("queue", {}),
    ("upsert", {"search_attribute_upserts": 2, "history_events": 34}),
    ("timers", {"history_events": 35}),
    ("attrs", {}),
    ("all", {"signals": 0, "updates": 2, "search_attribute_upserts": 2, "history_events": 37}),
    ("bytes4", {}),
    ("upsert4", {"search_attribute_upserts": 5, "history_events": 37}),
    ("timers4", {"history_events": 41}),
    ("queue2", {}),
    ("sas", {}),
    ("listing", {}),
    ("pollers", {}),
])
async def test_a_variant_differs_by_its_difference_alone(
        dev_server: WorkflowEnvironment, skeleton: tuple[dict[str, Any], Any], variant: str,
        changed: dict[str, int]) -> None:
    base, _ = skeleton
    shape, history = await _one_event(dev_server, f"ss+{variant}")
    assert {k: shape[k] for k in COUNTS} == {**{k: base[k] for k in COUNTS}, **changed}
    padded = {"bytes": 1, "all": 1, "bytes4": 4}.get(variant, 0)
    # Tollgate's approved event carries about 5.3 kB more than the skeleton's (run AL).
    grown = shape["history_bytes"] - base["history_bytes"]
    assert 4_800 * padded < grown < 6_300 * padded if padded else grown < 700
    own_queue = variant in ("queue", "all", "queue2")
    assert _send_queue(history) == (f"bench-{variant}-send" if own_queue
                                    else f"bench-{variant}")
    assert _read_queue(history) == (f"bench-{variant}-send" if variant == "queue2"
                                    else f"bench-{variant}")
    timers = sum(1 for e in history.events
                 if e.event_type == EventType.EVENT_TYPE_TIMER_STARTED)
    assert timers == {"timers": 2, "all": 2, "timers4": 8}.get(variant, 0)
    assert "timer_canceled" not in shape["bytes_by_event"]  # left to lapse, as Tollgate's
    started = history.events[0].workflow_execution_started_event_attributes
    attrs = set(started.search_attributes.indexed_fields)
    assert attrs == ({"TollgateTenant", "TollgateEventType"} if variant in ("attrs", "all", "sas")
                     else {"TollgateTenant"} if variant == "listing" else set())
