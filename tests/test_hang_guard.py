"""The hang guard's dump names where a waiting task waits, down to the library frame, not only
the test's own outermost line (which said "in xreadgroup" for a hang inside redis-py)."""

from __future__ import annotations

import asyncio
import io
import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests import hang_guard
from tests.hang_guard import _descendants, _dump_tasks, end_leftovers
from tests.pg_folder import pg_folder


async def _inner(lock: asyncio.Lock) -> None:
    async with lock:
        return None


async def _outer(lock: asyncio.Lock) -> None:
    await _inner(lock)


async def test_the_dump_follows_a_task_down_to_the_lock_it_waits_on() -> None:
    lock = asyncio.Lock()
    await lock.acquire()
    task = asyncio.create_task(_outer(lock), name="waits-on-a-lock")
    await asyncio.sleep(0)
    out = io.StringIO()
    _dump_tasks(out)
    task.cancel()
    text = out.getvalue()
    ours = text[text.index("waits-on-a-lock"):]
    assert "in _outer" in ours and "in _inner" in ours
    assert "asyncio/locks.py" in ours and "in acquire" in ours


_QUIT_DEFAULT = ("import pathlib, signal, sys, time; "
                 "signal.signal(signal.SIGQUIT, signal.SIG_DFL); "
                 "pathlib.Path(sys.argv[1]).touch(); time.sleep(600)")


def _gone(pid: int) -> bool:
    """No process ``pid``, or only its zombie (ended, not yet reaped by its parent)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_before_it_ends_the_process_the_guard_ends_the_servers_it_started() -> None:
    """A hang used to leave that process's servers running (redis-server, Temporal's, the
    embedded PostgreSQL, which pg_ctl starts as a daemon, no child of ours). Here a shell with a
    child and a grandchild stands for the process, and a daemonized ``sleep`` named by a
    ``postmaster.pid`` in a ``pg_folder`` for PostgreSQL: all three end. Not the process itself:
    the guard ends that with ``os._exit``."""
    if not Path("/proc/self/stat").exists():
        pytest.skip("needs /proc (Linux)")
    shell = subprocess.Popen(["bash", "-c", "sleep 600 & bash -c 'sleep 600; true' & wait"])  # noqa: S607
    with pg_folder("tollgate-guard-") as base:
        # A shell's background job starts with SIGQUIT ignored: the stand-in puts it back, as
        # PostgreSQL handles it (its immediate shutdown), then says it is ready.
        ready = base / "ready"
        daemon = int(subprocess.run(  # noqa: S603
            ["bash", "-c", f"{sys.executable} -c '{_QUIT_DEFAULT}' {ready} >/dev/null 2>&1 &"  # noqa: S607
             " echo $!"], capture_output=True, text=True, check=True).stdout)
        (base / "data").mkdir()
        (base / "data" / "postmaster.pid").write_text(f"{daemon}\n{base / 'data'}\n")
        below = eventually_below(shell.pid, 3)
        deadline = time.monotonic() + 10
        while not ready.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        ended = end_leftovers(shell.pid, [base])
    assert daemon in ended and set(below) <= set(ended), (ended, below)
    deadline = time.monotonic() + 10
    while not all(_gone(pid) for pid in [daemon, *below]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert all(_gone(pid) for pid in [daemon, *below]), [daemon, *below]
    assert shell.wait(10) is not None  # its children killed, its `wait` returns
    assert not _gone(os.getpid())


def eventually_below(root: int, count: int) -> list[int]:
    """The processes below ``root`` once there are ``count`` of them (a shell starts its
    children as it reads its line)."""
    deadline = time.monotonic() + 10
    while len(found := _descendants(root)) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(found) >= count, found
    return found



def test_the_guard_ends_them_before_it_ends_its_own_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The order the guard keeps: dump, end what this process started, then ``os._exit``."""
    done: list[str] = []
    monkeypatch.setattr(hang_guard, "end_leftovers",
                        lambda root, folders: done.append(f"leftovers of {root}") or [])
    monkeypatch.setattr(hang_guard.os, "_exit", lambda code: done.append(f"exit {code}"))
    monkeypatch.setattr(hang_guard.faulthandler, "dump_traceback", lambda **_: None)
    item = SimpleNamespace(nodeid="tests/x.py::test_y", config=SimpleNamespace(
        pluginmanager=SimpleNamespace(getplugin=lambda name: None)))
    monkeypatch.setattr(hang_guard.sys, "__stderr__", io.StringIO())
    hang_guard._expired(item, 360)  # type: ignore[arg-type]
    assert done == [f"leftovers of {os.getpid()}", "exit 1"]
