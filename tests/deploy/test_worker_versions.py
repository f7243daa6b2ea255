"""Two worker deployment versions side by side on the dev server (issue 13, item 6): with the
pinned behaviour, a run started on the old version finishes there after the new version became
current, while a new run goes to the new version. The workflow here is a probe that only says
which code ran it; how Tollgate's workers would adopt this is in docs/deploy.md."""

from __future__ import annotations

import uuid

from temporalio import workflow
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.common import VersioningBehavior, WorkerDeploymentVersion
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import UnsandboxedWorkflowRunner, Worker, WorkerDeploymentConfig

from adapters.broker.cancel import within
from tests.deploy.worker_versions_support import make_current, pinned_to
from tests.eventually import eventually


@workflow.defn(name="RolloutProbe")
class ProbeV1:
    def __init__(self) -> None:
        self.done = False

    @workflow.run
    async def run(self) -> str:
        await workflow.wait_condition(lambda: self.done)
        return "v1"

    @workflow.signal
    def finish(self) -> None:
        self.done = True


@workflow.defn(name="RolloutProbe")
class ProbeV2:
    def __init__(self) -> None:
        self.done = False

    @workflow.run
    async def run(self) -> str:
        await workflow.wait_condition(lambda: self.done)
        return "v2"

    @workflow.signal
    def finish(self) -> None:
        self.done = True


def versioned(client: Client, queue: str, deployment: str, build_id: str,
              probe: type) -> Worker:
    return Worker(client, task_queue=queue, workflows=[probe],
                  workflow_runner=UnsandboxedWorkflowRunner(),
                  deployment_config=WorkerDeploymentConfig(
                      version=WorkerDeploymentVersion(deployment, build_id),
                      use_worker_versioning=True,
                      default_versioning_behavior=VersioningBehavior.PINNED))


async def first_task_done(client: Client, workflow_id: str) -> None:
    async def task_completed() -> bool:
        events = [e async for e in client.get_workflow_handle(workflow_id).fetch_history_events()]
        return any(e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED for e in events)

    await eventually(task_completed, f"{workflow_id}: a workflow task completed", timeout=10,
                     interval=0.1)


async def test_old_runs_finish_on_the_old_version_new_runs_take_the_new(
    dev_server: WorkflowEnvironment,
) -> None:
    client = dev_server.client
    queue, deployment = f"rollout-{uuid.uuid4().hex[:8]}", f"tollgate-{uuid.uuid4().hex[:6]}"
    async with versioned(client, queue, deployment, "b1", ProbeV1):
        await make_current(client, deployment, "b1", queue)
        old = await client.start_workflow("RolloutProbe", id=f"old-{queue}", task_queue=queue)
        await first_task_done(client, old.id)  # now it is pinned to b1
        async with versioned(client, queue, deployment, "b2", ProbeV2):
            await make_current(client, deployment, "b2", queue)
            new = await client.start_workflow("RolloutProbe", id=f"new-{queue}",
                                              task_queue=queue)
            await first_task_done(client, new.id)
            await new.signal("finish")
            await old.signal("finish")
            assert await within(new.result(), 30) == "v2"
            assert await within(old.result(), 30) == "v1"
            # What the server recorded: each run pinned to the version it started on.
            assert await pinned_to(old) == "b1"
            assert await pinned_to(new) == "b2"
