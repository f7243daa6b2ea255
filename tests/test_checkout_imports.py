"""A process a test starts imports the checkout under test, not whichever one the venv's
editable install names (a git worktree sharing another checkout's venv checked that other
checkout's code through every subprocess test, and passed)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import tollgate

ROOT = Path(__file__).resolve().parents[1]


def test_a_started_process_imports_the_checkout_under_test() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "import tollgate; print(tollgate.__file__)"],
        env=dict(os.environ), cwd="/", capture_output=True, text=True, check=True, timeout=60)
    assert Path(done.stdout.strip()).resolve() == Path(tollgate.__file__).resolve()
    assert Path(tollgate.__file__).resolve().is_relative_to(ROOT)
