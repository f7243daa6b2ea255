"""A test that hangs fails the run in minutes, saying where it hung (pytest plugin).

pytest-timeout (``[tool.pytest.ini_options] timeout``) starts a timer per test, set-up and
teardown included. Its own thread method prints the threads' stacks and ends the process; this
plugin does the same and also prints every unfinished asyncio task's stack, because the suite's
tests share one event loop per process and a hung test is nearly always a coroutine waiting
for ever while the loop itself sits idle in ``select``, which a thread dump cannot show.

Under pytest-xdist the process that ended is replaced and the controller names the test it was
running ("worker 'gw1' crashed while running ..."); the dump goes to the process's standard
error, which xdist passes through.

Before it ends the process it ends what the process started and would leave running: every
process below it (redis-server, Temporal's servers, a whole ``tollgate dev``) and every
embedded PostgreSQL whose data is in one of its ``pg_folder``s. pg_ctl starts PostgreSQL as a
daemon, no child of ours, so that one is found by its ``postmaster.pid``.
"""

from __future__ import annotations

import asyncio
import contextlib
import faulthandler
import gc
import os
import signal
import sys
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from tests import pg_folder


def _frame(node: Any) -> Any:
    return next((getattr(node, name) for name in ("cr_frame", "gi_frame", "ag_frame")
                 if getattr(node, name, None) is not None), None)


def _write_chain(task: asyncio.Task[Any], out: Any) -> None:
    """Every frame from the task's coroutine down to what it waits on. ``Task.print_stack``
    gives a suspended coroutine's outermost frame only, which says "in xreadgroup" and not
    where in the library below it the wait is."""
    node: Any = task.get_coro()
    for _ in range(64):
        frame = _frame(node)
        if frame is None:
            out.write(f"  awaiting {node!r}\n")
            return
        out.write(f"  {frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}\n")
        node = next((getattr(node, name) for name in ("cr_await", "gi_yieldfrom", "ag_await")
                     if getattr(node, name, None) is not None), None)
        if node is None:
            return


def _dump_tasks(out: Any) -> None:
    # The loop may be running in the main thread: read, never touch. gc finds tasks of every
    # loop, including ones a test's own thread started.
    tasks = [o for o in gc.get_objects() if isinstance(o, asyncio.Task) and not o.done()]
    out.write(f"--- {len(tasks)} unfinished asyncio tasks ---\n")
    for task in tasks:
        out.write(f"{task!r}\n")
        try:
            _write_chain(task, out)
        except Exception as exc:  # a task mid-step can refuse; say so and go on
            out.write(f"  (stack unreadable: {type(exc).__name__})\n")


def _descendants(root: int) -> list[int]:
    """Every process below ``root`` (children first), from /proc; none where there is none."""
    parents: dict[int, int] = {}
    with contextlib.suppress(OSError):
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                with contextlib.suppress(OSError, IndexError, ValueError):
                    stat = Path(f"/proc/{entry}/stat").read_text()
                    # The name may hold spaces and parentheses: the parent's pid is the second
                    # field after the last ")".
                    parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = [], [root]
    while frontier:
        below = [pid for pid, parent in parents.items() if parent == frontier[0]]
        found += below
        frontier = frontier[1:] + below
    return found


def _postmasters(folders: Iterable[Path]) -> list[int]:
    """The PostgreSQL servers whose data lies in ``folders`` (each data folder's
    ``postmaster.pid`` names its server on the first line)."""
    pids = []
    for folder in list(folders):
        with contextlib.suppress(OSError):
            for pid_file in folder.rglob("postmaster.pid"):
                with contextlib.suppress(OSError, ValueError):
                    pids.append(int(pid_file.read_text().split("\n", 1)[0]))
    return pids


def end_leftovers(root: int, folders: Iterable[Path]) -> list[int]:
    """Stop the PostgreSQL servers of ``folders`` (SIGQUIT: the immediate shutdown) and kill
    every process below ``root``; returns the pids signalled."""
    ended = []
    for pid, sig in [*((p, signal.SIGQUIT) for p in _postmasters(folders)),
                     *((p, signal.SIGKILL) for p in _descendants(root))]:
        with contextlib.suppress(OSError):
            os.kill(pid, sig)
            ended.append(pid)
    return ended


def _expired(item: pytest.Item, timeout: float) -> None:
    # pytest captures file descriptors 1 and 2 around each test: let go of them first, or the
    # dump lands in a capture file that dies with the process.
    capman = item.config.pluginmanager.getplugin("capturemanager")
    if capman is not None:
        with contextlib.suppress(Exception):
            capman.suspend_global_capture(in_=True)
    out = sys.__stderr__ or sys.stderr
    out.write(f"\n+++ hang guard: {item.nodeid} still running after {timeout:.0f} s +++\n")
    try:
        _dump_tasks(out)
        out.write("--- threads ---\n")
        out.flush()
        faulthandler.dump_traceback(file=out, all_threads=True)
    finally:
        try:
            ended = end_leftovers(os.getpid(), pg_folder.LIVE)
            out.write(f"+++ hang guard: ended {len(ended)} processes this one started +++\n")
        finally:
            out.write(f"+++ hang guard: ending this test process ({item.nodeid}) +++\n")
            out.flush()
            os._exit(1)


@pytest.hookimpl(tryfirst=True)
def pytest_timeout_set_timer(item: pytest.Item, settings: Any) -> bool:
    timer = threading.Timer(settings.timeout, _expired, (item, settings.timeout))
    timer.name = f"hang guard {item.nodeid}"
    timer.daemon = True

    def cancel() -> None:
        timer.cancel()
        timer.join()

    item.cancel_timeout = cancel  # type: ignore[attr-defined]  # pytest-timeout's cancel hook
    timer.start()
    return True
