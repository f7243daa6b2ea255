"""Fixtures of the CLI tests."""

from __future__ import annotations

import pytest
from temporalio.testing import WorkflowEnvironment


@pytest.fixture
def temporal(env: WorkflowEnvironment) -> str:
    """A Temporal that answers (the time-skipping test server, which does not implement the
    task queue question, so the screen's probe says ``workers: ok``): with Temporal
    unreachable, open events alone need a human (tests/cli/test_status_workers.py)."""
    return env.client.service_client.config.target_host
