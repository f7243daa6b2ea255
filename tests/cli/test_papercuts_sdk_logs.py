"""The Temporal SDK's own log lines never share stdout with a command's answers: every client
is built on a runtime that forwards the core's lines to the `temporalio.core` logger (stderr,
redacted) at `TOLLGATE_SDK_LOG_LEVEL`, never on the SDK's default runtime, which prints them on
stdout."""

from __future__ import annotations

import logging

import pytest
from temporalio.runtime import Runtime
from temporalio.testing import WorkflowEnvironment

from tests.conftest import TEST_KEYS
from tollgate.config.base import ConfigError
from tollgate.config.worker import ObservabilitySettings
from tollgate.runtime.client import build_client


@pytest.mark.parametrize(("level", "python_level"), [("WARN", logging.WARNING),
                                                     ("ERROR", logging.ERROR)])
async def test_clients_forward_the_core_lines_at_the_asked_level(
    env: WorkflowEnvironment, level: str, python_level: int,
) -> None:
    client = await build_client(env.client.service_client.config.target_host, keys=TEST_KEYS,
                                env={"TOLLGATE_SDK_LOG_LEVEL": level})
    runtime = client.service_client.config.runtime
    assert runtime is not None and runtime is not Runtime.default()
    assert logging.getLogger("temporalio.core").level == python_level


def test_an_unknown_level_is_refused_naming_the_variable() -> None:
    with pytest.raises(ConfigError, match="TOLLGATE_SDK_LOG_LEVEL"):
        ObservabilitySettings.from_env({"TOLLGATE_SDK_LOG_LEVEL": "loud"})
