"""Only the client given the SDK-metrics runtime binds its port: another client of the same
process (the HTTP relay's, a CLI command's) with the same settings still connects. Binding it
twice stopped `tollgate dev` at its first webhook."""

from __future__ import annotations

import httpx
from temporalio.testing import WorkflowEnvironment

from tests.conftest import TEST_KEYS
from tests.ports import free_port
from tollgate.config.worker import ObservabilitySettings
from tollgate.observability.sdk_runtime import sdk_runtime
from tollgate.runtime.client import build_client


async def test_a_second_client_with_the_sdk_metrics_port_set_connects(
        env: WorkflowEnvironment) -> None:
    port = free_port()
    source = {"TOLLGATE_SDK_METRICS_PORT": str(port)}
    target = env.client.service_client.config.target_host
    worker_client = await build_client(
        target, keys=TEST_KEYS, env=source,
        runtime=sdk_runtime(ObservabilitySettings.from_env(source)))
    other = await build_client(target, keys=TEST_KEYS, env=source)
    assert await other.service_client.check_health()
    assert await worker_client.service_client.check_health()
    async with httpx.AsyncClient() as http:  # the worker's exporter still serves
        answer = await http.get(f"http://127.0.0.1:{port}/metrics")
    assert answer.status_code == 200
