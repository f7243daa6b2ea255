"""tests/pg_folder.py: an embedded PostgreSQL's folder is outside pytest's temp root, open to the
server's own user only for passing through, and gone afterwards, even after the package takes
its lock there once more at exit."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.pg_folder import pg_folder

ROOT = Path(__file__).resolve().parents[1]


def test_the_folder_is_outside_pytests_temp_root_and_removed_after(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    with pg_folder("tollgate-pgf-") as base:
        (base / "state").mkdir()
        assert stat.S_IMODE(base.stat().st_mode) == 0o711
        assert not base.is_relative_to(tmp_path_factory.getbasetemp().parent)
    assert not base.exists()


def test_nothing_stays_behind_once_a_postgresql_started_there_has_stopped() -> None:
    script = textwrap.dedent("""
        from tests.pg_folder import pg_folder
        from tollgate.dev.postgres import start_embedded_postgres, stop_embedded_postgres

        with pg_folder("tollgate-pgf-") as base:
            print(base, flush=True)
            server = start_embedded_postgres(base / "pgdata", cleanup_mode="stop")
            stop_embedded_postgres(server)
    """)
    # As a dev stack's server (cleanup_mode "stop"), the first this process starts: the package's
    # runtime folder, where it takes its lock once more at exit, is beside the data.
    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    done = subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT,  # noqa: S603
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    base = Path(done.stdout.splitlines()[0])
    left = sorted(str(p.relative_to(base)) for p in base.rglob("*")) if base.exists() else None
    assert left is None, left
