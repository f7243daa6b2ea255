"""Worker deployment versions for Tollgate's own workers (docs/deploy.md, rolling out).

``TOLLGATE_DEPLOYMENT_NAME`` and ``TOLLGATE_BUILD_ID`` (the image tag) both set: every worker of
the process polls as that version, and each workflow type's declared behaviour applies (pinned:
a run finishes on the version it started on; auto-upgrade: it moves to the current version at
its next task, its changes guarded by ``workflow.patched()``). Neither set: unversioned, as
before. New runs go to the deployment's current version, so a rollout ends with
``temporal worker deployment set-current-version``; until a version is current, nothing polls
for new runs.
"""

from __future__ import annotations

from temporalio.common import VersioningBehavior, WorkerDeploymentVersion
from temporalio.worker import WorkerDeploymentConfig

from tollgate.config.worker import WorkerSettings


def deployment_config(worker: WorkerSettings) -> WorkerDeploymentConfig | None:
    """The deployment version this process's workers poll as, or None (unversioned).

    Every workflow type a versioned worker runs declares its behaviour
    (``workflows/versioned.py``); the default here only covers one that forgot, and auto-upgrade
    is the one that cannot leave a forgotten type's runs on a version nobody runs any more.
    """
    # Both or neither: the settings tree refuses one without the other.
    name, build_id = worker.deployment_name, worker.build_id
    if not name or not build_id:
        return None
    return WorkerDeploymentConfig(
        version=WorkerDeploymentVersion(deployment_name=name, build_id=build_id),
        use_worker_versioning=True,
        default_versioning_behavior=VersioningBehavior.AUTO_UPGRADE)
