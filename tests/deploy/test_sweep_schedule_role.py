"""The receipt sweep's schedule in a deployment: ``tollgate dev`` creates it at start, compose
runs the ``sweep-schedule`` role once, and Kubernetes did not run it at all, so a cluster's
unknown writes were never swept (docs/deploy.md, "What a deployment starts, against the dev
stack"). Here the Kubernetes Job's own environment runs the image's entry point against the
dev server: the schedule is created once, on the main queue, and a second run leaves it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml
from temporalio.testing import WorkflowEnvironment

from tests.conftest import TEST_KEYS_FILE
from tests.deploy.files import COMPOSE, DEPLOY, K8S, compose, container_env, k8s_documents, pod_spec
from tollgate.ops.actions import SWEEP_SCHEDULE_ID

#: The roles that run once per release rather than as a service.
ONE_OFF = {"migrate", "sweep-schedule"}


def test_kubernetes_runs_every_one_off_role_compose_runs() -> None:
    in_compose = {svc["command"][0] for svc in compose()["services"].values()
                  if svc.get("restart") == "no" and svc.get("command", [""])[0] in ONE_OFF}
    applied = yaml.safe_load((K8S / "kustomization.yaml").read_text())["resources"]
    jobs = {c["args"][0] for path, d in k8s_documents() if d["kind"] == "Job"
            and path.name in applied for c in pod_spec(d)["containers"]}
    assert in_compose == ONE_OFF, COMPOSE
    assert jobs == ONE_OFF


def sweep_job_env() -> dict[str, str]:
    docs = k8s_documents()
    configmaps = {d["metadata"]["name"]: d["data"] for _, d in docs if d["kind"] == "ConfigMap"}
    [job] = [d for _, d in docs if d["kind"] == "Job"
             and pod_spec(d)["containers"][0]["args"] == ["sweep-schedule"]]
    return container_env(pod_spec(job)["containers"][0], configmaps)


async def test_the_sweep_schedule_job_creates_the_schedule_once(
        dev_server: WorkflowEnvironment, tmp_path: Path) -> None:
    env = {name: value for name, value in sweep_job_env().items() if value != "<secret>"}
    # The cluster's addresses and mounted files, here: the dev server, its namespace, the
    # test key ring; everything else is the Job's own.
    env |= {"TEMPORAL_ADDRESS": dev_server.client.service_client.config.target_host,
            "TEMPORAL_NAMESPACE": dev_server.client.namespace,
            "TOLLGATE_KEYS_FILE": str(TEST_KEYS_FILE), "TOLLGATE_STATE_DIR": str(tmp_path),
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    said = []
    for _ in range(2):
        done = subprocess.run(  # noqa: S603 - the image's entry point, our own arguments
            ["/bin/sh", str(DEPLOY / "entrypoint.sh"), "sweep-schedule"], env=env,
            capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        said.append(done.stdout.strip())
    assert said == ["sweep schedule created", "sweep schedule already exists"]
    described = await dev_server.client.get_schedule_handle(SWEEP_SCHEDULE_ID).describe()
    assert described.schedule.action.task_queue == env["TOLLGATE_TASK_QUEUE"]  # type: ignore[union-attr]
    await dev_server.client.get_schedule_handle(SWEEP_SCHEDULE_ID).delete()
