"""For the worker versioning tests: a build made current, and a run pinned to one."""

from __future__ import annotations

from typing import Any

from temporalio.api.deployment.v1 import WorkerDeploymentVersion
from temporalio.api.enums.v1 import RoutingConfigUpdateState, TaskQueueType
from temporalio.api.enums.v1 import VersioningBehavior as VersioningBehaviorProto
from temporalio.api.workflowservice.v1 import (
    DescribeWorkerDeploymentRequest,
    DescribeWorkerDeploymentVersionRequest,
    SetWorkerDeploymentCurrentVersionRequest,
)
from temporalio.client import Client, WorkflowHandle

from tests.eventually import eventually


async def make_current(client: Client, deployment: str, build_id: str,
                       task_queue: str | None = None) -> None:
    """``build_id`` current, once its worker polls ``task_queue``'s workflow tasks (when
    given) and until every task queue routes by it: a run started before either would still
    go to the previous build (a test's new event pinned to the old one, 2 runs in 5 at -n 2)."""
    service = client.workflow_service

    async def polls_queue() -> bool:
        info = (await service.describe_worker_deployment_version(
            DescribeWorkerDeploymentVersionRequest(
                namespace=client.namespace, deployment_version=WorkerDeploymentVersion(
                    deployment_name=deployment, build_id=build_id)))).worker_deployment_version_info
        return any(q.name == task_queue and q.type == TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW
                   for q in info.task_queue_infos)

    async def routed() -> bool:
        info = (await service.describe_worker_deployment(DescribeWorkerDeploymentRequest(
            namespace=client.namespace, deployment_name=deployment))).worker_deployment_info
        return (info.routing_config.current_deployment_version.build_id == build_id
                and info.routing_config_update_state
                == RoutingConfigUpdateState.ROUTING_CONFIG_UPDATE_STATE_COMPLETED)

    if task_queue is not None:
        await eventually(polls_queue, f"{deployment}:{build_id} polling {task_queue}",
                         timeout=20, interval=0.2, ignoring=(Exception,))

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
    await eventually(routed, f"{deployment}:{build_id} routed", timeout=20, interval=0.2)


async def pinned_to(handle: WorkflowHandle[Any, Any]) -> str:
    info = (await handle.describe()).raw_description.workflow_execution_info.versioning_info
    assert info.behavior == VersioningBehaviorProto.VERSIONING_BEHAVIOR_PINNED
    return str(info.deployment_version.build_id)
