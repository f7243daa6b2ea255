"""A stack's state folder: what lives where in it, who holds it, and what an earlier run left.

``temporal.db`` (Temporal's SQLite file), ``pgdata/`` (PostgreSQL), ``standins/`` (the
stand-ins' records), ``tenants.json`` and ``action-token.key`` (``dev_keys.py``), logs, and
while running ``endpoints.json`` plus the pid files ``stack.pid`` (the stack that holds the
folder) and ``temporal.pid`` (its Temporal dev server, so a later start can stop one left over).
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
from pathlib import Path

from tollgate.dev.guard import is_same_process, start_time, stop_process
from tollgate.dev.postgres import stop_leftover_postgres
from tollgate.dev.stack_config import TEMPORAL_DB_FILES, StackError

#: The stand-ins' records, under the state folder.
STANDINS_DIR = "standins"


def read_pid_file(path: Path) -> tuple[int, str, list[str]] | None:
    """(pid, start time, the rest) from a pid file ``write_pid_file`` wrote, or None."""
    try:
        pid, started, *rest = path.read_text().split()
        return int(pid), started, rest
    except (OSError, ValueError):
        return None


def write_pid_file(path: Path, pid: int, *rest: object) -> None:
    path.write_text(" ".join(str(v) for v in (pid, start_time(pid), *rest)) + "\n")


def claim(state_dir: Path) -> None:
    """One stack per state folder: a live owner is named; a dead one's file is taken over."""
    owner = read_pid_file(state_dir / "stack.pid")
    if owner and owner[0] != os.getpid() and is_same_process(owner[0], owner[1]):
        raise StackError(f"tollgate dev is already running on {state_dir} (pid "
                         f"{owner[0]}); stop it first or set another TOLLGATE_STATE_DIR")
    write_pid_file(state_dir / "stack.pid", os.getpid())


def stop_leftovers(state_dir: Path, *, postgres: bool) -> None:
    """Stop the Temporal dev server an earlier run left (its pid file names it), and with
    ``postgres`` the embedded PostgreSQL left on ``pgdata/``."""
    left = read_pid_file(state_dir / "temporal.pid")
    if left and is_same_process(left[0], left[1]):
        print(f"tollgate: stopping the Temporal dev server left over from an earlier run "
              f"(pid {left[0]}, port {' '.join(left[2]) or '?'})", file=sys.stderr)
        stop_process(left[0], signal.SIGTERM, grace_s=15)
    (state_dir / "temporal.pid").unlink(missing_ok=True)
    if postgres:
        stop_leftover_postgres(state_dir / "pgdata")


def delete_data(state_dir: Path) -> None:
    """Start empty: Temporal's file, PostgreSQL's data and the stand-ins' records go (the
    tenant keys stay, so producers keep working)."""
    for name in TEMPORAL_DB_FILES:
        (state_dir / name).unlink(missing_ok=True)
    shutil.rmtree(state_dir / "pgdata", ignore_errors=True)
    shutil.rmtree(state_dir / STANDINS_DIR, ignore_errors=True)
