"""For the worker versioning tests: a build made current, and a run pinned to one."""

from __future__ import annotations

from typing import Any

from temporalio.api.enums.v1 import VersioningBehavior as VersioningBehaviorProto
from temporalio.api.workflowservice.v1 import SetWorkerDeploymentCurrentVersionRequest
from temporalio.client import Client, WorkflowHandle

from tests.eventually import eventually


async def make_current(client: Client, deployment: str, build_id: str) -> None:
    async def set_current() -> bool:
        await client.workflow_service.set_worker_deployment_current_version(
            SetWorkerDeploymentCurrentVersionRequest(
                namespace=client.namespace, deployment_name=deployment, build_id=build_id,
                ignore_missing_task_queues=True))
        return True

    # The version exists once its worker has polled: retry until the server knows it
    # (NOT_FOUND or FAILED_PRECONDITION until then).
    await eventually(set_current, f"{deployment}:{build_id} current", timeout=20, interval=0.2,
                     ignoring=(Exception,))


async def pinned_to(handle: WorkflowHandle[Any, Any]) -> str:
    info = (await handle.describe()).raw_description.workflow_execution_info.versioning_info
    assert info.behavior == VersioningBehaviorProto.VERSIONING_BEHAVIOR_PINNED
    return str(info.deployment_version.build_id)
