"""``python -m tollgate.intake.broker`` refused at its start says so in one line, never a
traceback and never the broker URL's password: Temporal not answering was the SDK's "Failed
client connect" traceback, RabbitMQ not answering the adapter's RetryableError."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from tests.conftest import TEST_KEYS_FILE
from tests.ports import free_port

PASSWORD = "pw-not-to-show"


def broker_start(temporal: str, state: Path) -> tuple[int, str]:
    """The process's exit code and its whole output, started against ``temporal`` and a
    RabbitMQ that does not listen."""
    amqp = f"amqp://tollgate:{PASSWORD}@127.0.0.1:{free_port()}/"
    variables = {"PATH": os.environ.get("PATH", ""), "TOLLGATE_STATE_DIR": str(state),
                 "TEMPORAL_ADDRESS": temporal, "TOLLGATE_KEYS_FILE": str(TEST_KEYS_FILE),
                 "TOLLGATE_AMQP_URL": amqp, "PYTHONUNBUFFERED": "1"}
    done = subprocess.run([sys.executable, "-m", "tollgate.intake.broker"], env=variables,
                          capture_output=True, timeout=60, cwd=Path(__file__).parents[2],
                          check=False)
    return done.returncode, (done.stdout + done.stderr).decode()


def lines_of(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.strip() and not line.startswith("{")]


def test_temporal_not_answering_is_one_line(tmp_path: Path) -> None:
    address = f"127.0.0.1:{free_port()}"
    code, output = broker_start(address, tmp_path)
    assert (code, lines_of(output)) == (1, [
        f"cannot reach Temporal at {address}: start the stack with `tollgate dev` (or set "
        "TEMPORAL_ADDRESS)"]), output
    assert PASSWORD not in output


@pytest.mark.e2e
def test_rabbitmq_not_answering_is_one_line_naming_the_variable(
        dev_server: WorkflowEnvironment, tmp_path: Path) -> None:
    code, output = broker_start(dev_server.client.service_client.config.target_host, tmp_path)
    assert code == 1, output
    (line,) = lines_of(output)
    assert line.startswith("cannot connect to RabbitMQ (") and line.endswith(
        ") (TOLLGATE_AMQP_URL)"), output
    assert PASSWORD not in output and "Traceback" not in output
