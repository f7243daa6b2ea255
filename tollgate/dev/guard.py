"""Stops the dev stack's servers when the process that started them dies without stopping them.

``tollgate dev`` stops what it started on any catchable signal; this covers the rest (SIGKILL,
the OOM killer, a crash in native code). The stack starts this module as a small separate
process (``python -m tollgate.dev.guard``, standard library only) in its own session and keeps
the write end of a pipe to it. The kernel closes that pipe however the parent dies, so the
guard's read of its stdin ends; every server it still watches then gets its stop signal, and
SIGKILL after a grace period. A parent-death signal (``PR_SET_PDEATHSIG``) would not do: it does
not reach PostgreSQL's postmaster, which ``pg_ctl`` daemonises, and it fires when the *thread*
that started a child exits. See ``docs/adr/0004-stack-guard-process.md``.

Protocol, one line per message on stdin: ``watch PID SIGNAL START`` (``START``: the process's
start time from ``/proc``, so a recycled pid is never signalled) and ``forget PID`` (the parent
stopped it itself). A clean parent forgets everything, then closes the pipe.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

#: How long a server gets to stop on its signal before SIGKILL.
GRACE_S = 10.0


def start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (field 22 of ``/proc/PID/stat``), or
    None when no such live process exists (a zombie counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()  # the name in parentheses may hold spaces
    return None if fields[0] in ("Z", "X") else fields[19]


def is_same_process(pid: int, started: str | None) -> bool:
    return started is not None and start_time(pid) == started


def command_line(pid: int) -> str:
    with contextlib.suppress(OSError):
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
        return raw.replace(b"\0", b" ").decode(errors="replace")
    return ""


def stop_process(pid: int, sig: int, *, grace_s: float = GRACE_S) -> None:
    """Sends ``sig``, waits up to ``grace_s`` for the process to go, then sends SIGKILL."""
    started = start_time(pid)
    if started is None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        if not is_same_process(pid, started):
            return
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # reap it if it is our own child
        time.sleep(0.05)
    if is_same_process(pid, started):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


class Guard:
    """The parent's end: starts the guard process and tells it what to watch."""

    def __init__(self) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "tollgate.dev.guard"], stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL, start_new_session=True)

    @property
    def pid(self) -> int:
        return self._proc.pid

    def _send(self, line: str) -> None:
        assert self._proc.stdin is not None
        with contextlib.suppress(BrokenPipeError):  # the guard is gone: nothing to tell it
            self._proc.stdin.write(f"{line}\n".encode())
            self._proc.stdin.flush()

    def watch(self, pid: int, sig: signal.Signals) -> None:
        self._send(f"watch {pid} {int(sig)} {start_time(pid)}")

    def forget(self, pid: int) -> None:
        self._send(f"forget {pid}")

    def close(self) -> None:
        """Closes the pipe: the guard stops what is still watched (nothing, after a clean stop)."""
        assert self._proc.stdin is not None
        with contextlib.suppress(BrokenPipeError):
            self._proc.stdin.close()
        try:
            self._proc.wait(GRACE_S * 2)
        except subprocess.TimeoutExpired:
            self._proc.kill()


def main() -> None:
    # The guard must outlive a terminal that closes or a Ctrl-C aimed at `tollgate dev`.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    watched: dict[int, tuple[int, str]] = {}
    for line in sys.stdin:
        parts = line.split()
        if len(parts) == 4 and parts[0] == "watch" and parts[3] != "None":
            watched[int(parts[1])] = (int(parts[2]), parts[3])
        elif len(parts) == 2 and parts[0] == "forget":
            watched.pop(int(parts[1]), None)
    _signal_all(watched, None)
    deadline = time.monotonic() + GRACE_S
    while time.monotonic() < deadline and any(
            is_same_process(pid, started) for pid, (_, started) in watched.items()):
        time.sleep(0.05)
    _signal_all(watched, signal.SIGKILL)


def _signal_all(watched: dict[int, tuple[int, str]], override: int | None) -> None:
    for pid, (sig, started) in watched.items():
        if is_same_process(pid, started):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, override if override is not None else sig)


if __name__ == "__main__":
    main()
