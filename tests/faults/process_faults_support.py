"""For the process fault tests: a worker in a process of its own, and the rig they run on."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

import worker as worker_module
from tests.conftest import fresh_key
from tests.faults.conftest import Rig
from tollgate.runtime.identity import dev_private_key


class WorkerProcess:
    """`python worker.py` in its own process, so SIGKILL is a real crash."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.env, self.log = env, log
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        out = open(self.log, "ab")  # noqa: SIM115 - lives with the process
        self.proc = subprocess.Popen(
            [sys.executable, "worker.py", "--queue", "all"],
            env=self.env, cwd=Path(worker_module.__file__).parent,
            stdout=out, stderr=out, stdin=subprocess.DEVNULL)

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


@contextmanager
def worker_process(rig: Rig, folder: Path, suffix: str, *, dev_key: bool = True,
                   **extra: str) -> Iterator[WorkerProcess]:
    """``python worker.py`` serving the rig's task queue (renamed ``<queue>-<suffix>``) from
    state folder ``folder``, with ``extra`` variables; the rig decides with tokens it checks
    (``dev_key=False``: the folder holds no dev key when the worker starts)."""
    s = rig.settings
    env = {**os.environ, "TEMPORAL_ADDRESS": s.temporal_address,
           "DATABASE_URL": s.dsn or "", "TOLLGATE_CRM_URL": s.crm_url or "",
           "TOLLGATE_MESSAGING_URL": s.messaging_url or "",
           "TOLLGATE_TASK_QUEUE": f"{s.task_queue}-{suffix}",
           "TOLLGATE_TENANTS_FILE": str(s.tenants_file), "TOLLGATE_STATE_DIR": str(folder),
           "TOLLGATE_TARGETS": s.env["TOLLGATE_TARGETS"],
           "TOLLGATE_KEYS_FILE": s.env["TOLLGATE_KEYS_FILE"],
           "TOLLGATE_ACTION_TOKEN_KEY": s.env["TOLLGATE_ACTION_TOKEN_KEY"], **extra}
    proc = WorkerProcess(env, folder / "worker.log")
    folder.mkdir(parents=True, exist_ok=True)
    if dev_key:  # the worker checks decisions against it; the rig signs with it
        dev_private_key(folder)
    rig.token_dir = folder
    proc.start()
    rig.queue = env["TOLLGATE_TASK_QUEUE"]
    try:
        yield proc
    finally:
        proc.stop()


@pytest.fixture
def process_rig(rig: Rig, tmp_path: Path) -> Iterator[tuple[Rig, WorkerProcess]]:
    """The rig's task queue served by a worker process instead of the in-process worker."""
    with worker_process(rig, tmp_path, "proc") as proc:
        yield rig, proc


def new_key() -> str:
    return fresh_key("p")
