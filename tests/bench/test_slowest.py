"""The bench names what its slowest event waited on, from that event's history: a lost or
failed task, an activity's retries, and the longest wait between two history events."""

from __future__ import annotations

import uuid
from datetime import timedelta

from temporalio import activity, workflow
from temporalio.common import RetryPolicy
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from tollgate.bench.slowest import slowest_history, slowest_line

TRIES: dict[str, int] = {}
FAIL_TASK_ONCE: set[str] = set()


@activity.defn
async def flaky(key: str) -> str:
    TRIES[key] = TRIES.get(key, 0) + 1
    if TRIES[key] < 3:
        raise RuntimeError("not yet")
    return "ok"


@workflow.defn(sandboxed=False)
class Stalls:
    @workflow.run
    async def run(self, key: str) -> str:
        if key in FAIL_TASK_ONCE:  # the first workflow task fails, its retry goes on
            FAIL_TASK_ONCE.discard(key)
            raise RuntimeError("a workflow task that fails")
        await workflow.sleep(timedelta(hours=1))
        return await workflow.execute_activity(
            flaky, key, start_to_close_timeout=timedelta(seconds=10),
            retry_policy=RetryPolicy(initial_interval=timedelta(milliseconds=10)))


async def test_the_slowest_events_history_says_what_it_waited_on(
        env: WorkflowEnvironment) -> None:
    queue, key = f"tq-{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    FAIL_TASK_ONCE.add(key)
    async with Worker(env.client, task_queue=queue, workflows=[Stalls], activities=[flaky],
                      workflow_runner=UnsandboxedWorkflowRunner()):
        assert await env.client.execute_workflow(Stalls.run, key, id=f"slow-{key}",
                                                 task_queue=queue) == "ok"
        found = await slowest_history(env.client, f"slow-{key}", 12.34)

    assert found["workflow_id"] == f"slow-{key}" and found["e2e_ms"] == 12340.0
    assert found["trouble"] == {"WORKFLOW_TASK_FAILED": 1}
    assert found["most_activity_attempts"] == 3
    gap = found["longest_gap"]
    assert (gap["after"], gap["before"]) == ("TIMER_STARTED", "TIMER_FIRED")
    assert gap["ms"] >= 3_600_000
    line = slowest_line("tollgate", found)
    assert line is not None and "slowest event 12.3 s end to end, 3600." in line
    assert "of it in the run's history: WORKFLOW_TASK_FAILED 1" in line
    assert "activity attempts at most 3" in line and "TIMER_STARTED -> TIMER_FIRED" in line
    assert found["history_ms"] >= 3_600_000
    assert slowest_line("tollgate", None) is None


def test_a_wait_outside_the_run_shows_beside_its_history() -> None:
    """As in run AK's skeleton: one event 20.2 s end to end, no history gap over 93 ms; most of
    the time was outside the run. The line says how much was in it; older --json without the
    span still renders."""
    found = {"workflow_id": "w", "e2e_ms": 20194.4, "history_ms": 1990, "history_events": 35,
             "trouble": {}, "most_activity_attempts": 1,
             "longest_gap": {"ms": 93, "after": "WORKFLOW_TASK_SCHEDULED",
                             "before": "WORKFLOW_TASK_STARTED"}}
    line = slowest_line("same-shape", found)
    assert line is not None
    assert "slowest event 20.2 s end to end, 2.0 s of it in the run's history: no task" in line
    del found["history_ms"]
    assert "slowest event 20.2 s end to end: no task lost" in (slowest_line("x", found) or "")
