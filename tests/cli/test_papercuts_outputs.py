"""What the on-call reads: `ops sweep` answers in text unless asked for JSON, `ops backup` says
one line and no warning, and `review list` against a paused Temporal ends with its exit-3 line
within `TOLLGATE_CLI_TIMEOUT` instead of hanging."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from tests.cli.helpers import base_env, run_ops, tollgate
from tests.conftest import worker_settings
from tests.eventually import eventually
from tests.ports import free_port
from tollgate.dev.standins import StandIns
from tollgate.runtime.exits import Exit


async def test_sweep_prints_text_and_json_only_when_asked(
    worker_client: tuple[Client, str], env: WorkflowEnvironment, database_url: str,
    standins: StandIns, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    _, queue = worker_client
    s = worker_settings(database_url, standins, tmp_path, queue,
                        TEMPORAL_ADDRESS=env.client.service_client.config.target_host)
    assert await run_ops(["sweep"], s) == 0
    # The in-process worker's own log lines share the captured stdout: read the command's.
    lines = capsys.readouterr().out.splitlines()
    assert ("0 receipt(s) checked: 0 settled (found at the target), 0 still open, "
            "0 missing at the target") in lines
    assert not any(line.startswith(("{", "}")) for line in lines)
    assert await run_ops(["sweep", "--json"], s) == 0
    out = capsys.readouterr().out
    assert json.loads(out[out.index("{"):])["checked"] == 0


def test_backup_prints_one_line_and_no_warning(database_url: str, tmp_path: Path) -> None:
    env = base_env(tmp_path, DATABASE_URL=database_url)
    env.pop("XDG_RUNTIME_DIR", None)  # unset: platformdirs warns when asked for a runtime dir
    out = tmp_path / "tollgate.dump"
    said = tollgate("ops", "backup", str(out), env=env)
    assert said.code == 0, said.text
    assert said.out.strip() == f"backup written to {out}" and said.err == ""
    assert out.stat().st_size > 0


@pytest.fixture
def paused_temporal(tmp_path: Path) -> Iterator[str]:
    """A Temporal dev server of its own, stopped with SIGSTOP once it answers: it accepts
    connections (the kernel does) and never replies. Continued and stopped at the end."""
    port = free_port()
    binary = Path(sys.executable).with_name("temporal")
    server = subprocess.Popen(  # noqa: S603
        [str(binary), "server", "start-dev", "--headless", "--port", str(port),
         "--http-port", str(free_port()), "--metrics-port", str(free_port()),
         "--log-level", "error"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    address = f"127.0.0.1:{port}"
    try:
        import asyncio

        asyncio.run(eventually(lambda: Client.connect(address), "the dev server answering",
                               timeout=60, ignoring=(RuntimeError,)))
        os.kill(server.pid, signal.SIGSTOP)
        yield address
    finally:
        os.kill(server.pid, signal.SIGCONT)
        server.terminate()
        server.wait(timeout=30)


@pytest.mark.e2e
def test_review_list_against_a_paused_temporal_ends_with_exit_3(
    paused_temporal: str, tmp_path: Path,
) -> None:
    env = base_env(tmp_path, TEMPORAL_ADDRESS=paused_temporal, TOLLGATE_CLI_TIMEOUT="3")
    began = time.monotonic()
    said = tollgate("review", "list", env=env, timeout=60)
    took = time.monotonic() - began
    assert said.code == Exit.UNREACHABLE, said.text
    assert said.clean() and len(said.err.strip().splitlines()) == 1, said.err
    assert paused_temporal in said.err
    assert took < 12, f"took {took:.1f} s with a 3 s timeout"
