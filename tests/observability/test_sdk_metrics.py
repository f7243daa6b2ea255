"""The Temporal SDK's metrics, as the worker serves them, pass ``promtool check metrics``:
counters end in ``_total`` and durations are seconds named ``_seconds`` (the SDK's Prometheus
exporter options, ``tollgate.observability.sdk_runtime``)."""

from __future__ import annotations

import shutil
import subprocess
import uuid
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from temporalio import activity, workflow
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from tests.conftest import TEST_KEYS
from tests.eventually import eventually
from tests.ports import free_port
from tollgate.config.settings import Settings
from tollgate.observability.sdk_runtime import sdk_runtime
from tollgate.runtime.client import build_client


@activity.defn
async def say_done() -> str:
    return "done"


@workflow.defn(sandboxed=False)
class OneActivityWorkflow:
    @workflow.run
    async def run(self) -> str:
        return str(await workflow.execute_activity(
            say_done, start_to_close_timeout=timedelta(seconds=10)))


async def test_the_sdk_metrics_pass_promtool(dev_server: WorkflowEnvironment,
                                             tmp_path: Path) -> None:
    tool = shutil.which("promtool")
    if tool is None:
        pytest.skip("promtool is missing: install the Debian package prometheus")
    port = free_port()
    settings = Settings.from_env({"TOLLGATE_STATE_DIR": str(tmp_path),
                                  "TOLLGATE_SDK_METRICS_PORT": str(port)})
    client = await build_client(dev_server.client.service_client.config.target_host,
                                keys=TEST_KEYS, env={}, runtime=sdk_runtime(settings.observability))
    queue = f"sdk-metrics-{uuid.uuid4().hex[:8]}"
    async with Worker(client, task_queue=queue, workflows=[OneActivityWorkflow],
                      activities=[say_done]):
        assert await client.execute_workflow(OneActivityWorkflow.run, id=queue,
                                             task_queue=queue) == "done"
        url = f"http://127.0.0.1:{port}/metrics"

        async def scrape() -> str:
            async with httpx.AsyncClient() as http:
                return (await http.get(url)).text

        page = await eventually(scrape, "the SDK reports its workflow task latency",
                                until=lambda t: "temporal_workflow_task_schedule_to_start" in t)
    checked = subprocess.run([tool, "check", "metrics"], input=page,  # noqa: S603
                             capture_output=True, text=True, timeout=60, check=False)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    # The names the dashboard charts (deploy/grafana/tollgate.json).
    assert "temporal_workflow_task_schedule_to_start_latency_seconds_bucket" in page
    assert "temporal_workflow_completed_total" in page
