"""Target queues no worker polls. A send, and the reconciler's lookups and resend, run on their
target's own task queue (``contracts.target_task_queue``), which only a worker with that target's
URL polls (``tollgate/runtime/workers.py``). On a fleet where none has it, the task waits there
with no timeout, on purpose (a worker that comes back sends it once, and nothing is lost), and
without a word: it never starts, so it never fails, and the event stays APPROVED (the workflow
says EXECUTING). Nothing else on ``tollgate ops status`` can tell, so it asks Temporal, per target
this build knows, whether a worker polls and how many tasks wait; ``tollgate ops state`` and
``tollgate trace`` ask the same of the queue a run's own pending step waits on (``ops state``
also of its child's: an unknown write's reconciler), in the same words (``said``)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Final

from temporalio.api.enums.v1 import PendingActivityState, TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.service import RPCError

from adapters.broker.cancel import within
from contracts import target_task_queue
from tollgate.runtime.targets import URL_VARIABLES

if TYPE_CHECKING:
    from temporalio.client import Client, WorkflowExecutionDescription

#: One short RPC per target queue, as the main queue's probe (``worker_probe``).
PROBE_TIMEOUT_S: Final = 2.0


async def describe(client: Client, queue: str) -> tuple[int, int, float | None]:
    """The activity queue's pollers, its approximate backlog and the oldest task's age in
    seconds (None when nothing waits)."""
    from datetime import timedelta

    found = await client.workflow_service.describe_task_queue(
        DescribeTaskQueueRequest(namespace=client.namespace, task_queue=TaskQueue(name=queue),
                                 task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
                                 report_stats=True),
        timeout=timedelta(seconds=PROBE_TIMEOUT_S))
    waiting = found.stats.approximate_backlog_count
    age = found.stats.approximate_backlog_age.ToTimedelta().total_seconds() if waiting else None
    return len(found.pollers), waiting, age


async def probe_targets(client: Client, main_queue: str) -> list[dict[str, Any]]:
    """Per target: ``{"target", "task_queue", "variable", "state", "waiting", "oldest_age_s"}``,
    state ``ok`` (a worker polls), ``no worker`` (none polls and tasks wait: they do not move),
    ``not polled`` (none polls, nothing waits: a target this fleet does not use), or ``not
    probed`` (Temporal did not answer for it; the main queue's probe says why)."""

    async def one(name: str) -> dict[str, Any]:
        queue = target_task_queue(main_queue, name)
        found: dict[str, Any] = {"target": name, "task_queue": queue,
                                 "variable": URL_VARIABLES[name], "state": "not probed",
                                 "waiting": None, "oldest_age_s": None}
        try:
            pollers, waiting, age = await within(describe(client, queue), PROBE_TIMEOUT_S)
        except (RPCError, TimeoutError):
            return found
        state = "ok" if pollers else "no worker" if waiting else "not polled"
        return {**found, "state": state, "waiting": waiting, "oldest_age_s": age}

    return list(await asyncio.gather(*(one(name) for name in sorted(URL_VARIABLES))))


async def waits_for_worker(client: Client, desc: WorkflowExecutionDescription
                           ) -> dict[str, str] | None:
    """``{"target", "task_queue", "variable"}`` when the run's own send is scheduled on its
    target's queue and no worker polls it; else None, also when Temporal does not answer (the
    state shown stands without it). One more RPC, only for a send scheduled and not started.
    A reconciler's lookup waiting so is its child run's (``waits_within`` looks there too)."""
    for step in desc.raw_description.pending_activities:
        if step.state != PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED:
            continue  # a worker holds it
        queue = step.activity_options.task_queue.name
        target = next((name for name in URL_VARIABLES
                       if target_task_queue(desc.task_queue, name) == queue), None)
        if target is None:
            continue
        try:
            pollers = (await describe(client, queue))[0]
        except RPCError:
            return None
        if not pollers:
            return {"target": target, "task_queue": queue, "variable": URL_VARIABLES[target]}
    return None


async def waits_within(client: Client, desc: WorkflowExecutionDescription
                       ) -> dict[str, str] | None:
    """``waits_for_worker`` of the run, else of its running children, with ``"child"`` then
    naming the child run that waits: an unknown write's reconciler (``reconcile/KEY``) runs
    its lookups and resend on the target's queue while the event's run only waits for it.
    One level: a reconciler starts no children. A child Temporal does not describe is passed
    over, as a queue it does not describe is."""
    if (own := await waits_for_worker(client, desc)) is not None:
        return own
    for child in desc.raw_description.pending_children:
        try:
            found = await client.get_workflow_handle(child.workflow_id,
                                                     run_id=child.run_id or None).describe()
        except RPCError:
            continue
        if (waits := await waits_for_worker(client, found)) is not None:
            return {**waits, "child": child.workflow_id}
    return None


def said(waits: dict[str, str]) -> str:
    """A wait ``waits_for_worker`` or ``waits_within`` found, as ``ops state`` and ``trace``
    print it."""
    who = f"child run {waits['child']} " if "child" in waits else ""
    return (f"{who}waits for a worker of target {waits['target']}: none polls task queue "
            f"{waits['task_queue']} (set {waits['variable']} on a worker)")
