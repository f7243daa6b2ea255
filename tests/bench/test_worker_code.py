"""The bench's worker processes run the code of the bench that starts them, not whatever the
working directory holds: an A/B run of an older commit (its checkout on ``PYTHONPATH``) must be
that commit in the workers too, or it measures a mix (what happened before ``CODE_ROOT``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import tollgate
from tollgate.bench.worker import CODE_ROOT


def test_a_process_started_where_the_workers_start_imports_the_benchs_own_package(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A directory holding another "tollgate" package, as another checkout would.
    other = tmp_path / "other"
    (other / "tollgate").mkdir(parents=True)
    (other / "tollgate" / "__init__.py").write_text("")
    monkeypatch.chdir(other)
    out = subprocess.run(
        [sys.executable, "-c", "import tollgate; print(tollgate.__file__)"],
        cwd=CODE_ROOT, capture_output=True, text=True, check=True).stdout.strip()
    assert Path(out).resolve() == Path(tollgate.__file__).resolve()
    # Started in the working directory instead (the old way), it would import the other one.
    stray = subprocess.run(
        [sys.executable, "-c", "import tollgate; print(tollgate.__file__)"],
        cwd=other, capture_output=True, text=True, check=True).stdout.strip()
    assert Path(stray).resolve() == (other / "tollgate" / "__init__.py").resolve()
