"""Runs `tollgate dev` as a subprocess on a state folder and env-chosen free ports, and finds
every process and port of the stack it started (from /proc and the stack's pid files)."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tests.pg_folder import pg_folder
from tests.ports import free_port
from tollgate.dev.guard import start_time

#: Variables that would point the stack at something other than its own embedded parts.
_OUTSIDE = ("DATABASE_URL", "TEMPORAL_ADDRESS", "TOLLGATE_CRM_URL", "TOLLGATE_MESSAGING_URL",
            "TOLLGATE_TENANTS_FILE", "TOLLGATE_DRAFT_PROVIDER", "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY", "TOLLGATE_DRAFT_API_KEY")


@contextlib.contextmanager
def stack_folder() -> Iterator[Path]:
    """A state folder outside pytest's temp root (tests/pg_folder.py says why)."""
    with pg_folder("tollgate-stack-") as base:
        yield base / "state"


@dataclass
class DevProcess:
    state_dir: Path
    ports: dict[str, int] = field(default_factory=lambda: {
        name: free_port() for name in ("TEMPORAL", "UI", "CRM", "MESSAGING", "HTTP", "METRICS",
                                        "SDK_METRICS")})
    proc: subprocess.Popen[bytes] | None = None
    #: Tells apart the output files of two processes started on one state folder.
    label: str = ""

    @property
    def output_file(self) -> Path:
        return self.state_dir.parent / f"{self.state_dir.name}{self.label}.out"

    def output(self) -> str:
        return self.output_file.read_text(errors="replace") if self.output_file.exists() else ""

    def start(self, *args: str, within: float = 120) -> DevProcess:
        env = {k: v for k, v in os.environ.items() if k not in _OUTSIDE}
        env.update({f"TOLLGATE_{name}_PORT": str(port) for name, port in self.ports.items()})
        env.update(TOLLGATE_STATE_DIR=str(self.state_dir), TOLLGATE_DRAFT_PROVIDER="offline")
        tollgate = Path(sys.executable).parent / "tollgate"
        out = self.output_file.open("w")
        self.proc = subprocess.Popen([str(tollgate), "dev", *args], env=env,  # noqa: S603
                                     stdout=out, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)
        out.close()
        deadline = time.monotonic() + within
        while "worker running" not in self.output():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.proc.kill()
                raise AssertionError(f"tollgate dev did not come up:\n{self.output()}")
            time.sleep(0.2)
        return self

    def stack_pids(self) -> set[int]:
        """The parent, every descendant of it, and the PostgreSQL postmaster (``pg_ctl``
        daemonises it, so it is nobody's descendant)."""
        assert self.proc is not None
        pids = {self.proc.pid} | descendants(self.proc.pid)
        pm = self.state_dir / "pgdata" / "postmaster.pid"
        if pm.exists():
            pids.add(int(pm.read_text().split("\n", 1)[0]))
        return pids

    def wait_exit(self, within: float = 60) -> int:
        assert self.proc is not None
        return self.proc.wait(within)


def descendants(root: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            ppid = int(stat[stat.rindex(")") + 2:].split()[1])
            children.setdefault(ppid, []).append(int(entry.name))
    found: set[int] = set()
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def alive(pids: set[int], within: float) -> set[int]:
    """The pids still running (zombies count as gone) after waiting up to ``within`` seconds."""
    deadline = time.monotonic() + within
    while True:
        left = {pid for pid in pids if start_time(pid) is not None}
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)


def ports_in_use(ports: dict[str, int]) -> list[str]:
    taken = []
    for name, port in ports.items():
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                taken.append(f"{name}={port}")
    return taken
