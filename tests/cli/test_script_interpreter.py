"""`python starter.py …` (and `python worker.py`) under a Python that lacks Tollgate's
dependencies ends in one line saying what to run instead, exit 7, never an import traceback
(issue 31 item 3). Run as a newcomer would: a subprocess of an interpreter without the venv's
packages, from a checkout as `make install` leaves it and from a fresh copy that was never
installed.

Both checkouts are copies built here, not the one under test: what the scripts say depends on
the files beside them (``tollgate.egg-info``, ``.venv``), and a git worktree or a clone that was
never installed has no egg-info, so the checkout itself would answer for the second case."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from importlib import metadata
from pathlib import Path

import pytest

from tollgate.runtime.exits import Exit
from tollgate.runtime.interpreter import what_is_missing

ROOT = Path(__file__).resolve().parents[2]
EVENTS = "tollgate/dev/examples/events.json"


def run(python: list[str], script: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    # A machine's plain python: no PYTHONPATH (the suite sets one to this checkout).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([*python, str(script), *args], cwd=cwd, capture_output=True,  # noqa: S603
                          text=True, timeout=120, check=False, env=env)


def assert_one_line(done: subprocess.CompletedProcess[str], script: str) -> str:
    assert done.returncode == Exit.CONFIG == 7, done.stderr
    assert done.stdout == "" and "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("tollgate: this Python (") and f"cannot run {script}" in lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """A fresh venv with nothing installed: the plain `python` of a machine."""
    home = tmp_path_factory.mktemp("bare") / "venv"
    venv.create(home, with_pip=False)
    return [str(home / "bin" / "python")]


def copy_checkout(clone: Path) -> Path:
    """The package and both scripts of this checkout, without the files an install adds."""
    shutil.copytree(ROOT / "tollgate", clone / "tollgate",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for script in ("starter.py", "worker.py"):
        shutil.copy(ROOT / script, clone)
    return clone


@pytest.fixture(scope="module")
def installed_checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of this checkout as `make install` leaves it: the editable install's
    ``tollgate.egg-info`` beside the scripts (what a bare ``python starter.py`` finds through
    ``sys.path[0]``: Tollgate installed, its dependencies not) and ``.venv/bin/python``."""
    clone = copy_checkout(tmp_path_factory.mktemp("installed") / "clone")
    info = clone / "tollgate.egg-info"
    info.mkdir()
    # The installed distribution's metadata, whichever form it has: a wheel-style dist-info
    # keeps the requirements in METADATA (Requires-Dist), an egg-info (a clone `make install`
    # ran in, first on the path here) in PKG-INFO and requires.txt.
    dist = metadata.distribution("tollgate")
    (info / "PKG-INFO").write_text(dist.read_text("METADATA") or dist.read_text("PKG-INFO") or "")
    (info / "requires.txt").write_text(dist.read_text("requires.txt") or "")
    assert metadata.PathDistribution(info).requires, "the copy's egg-info names no requirement"
    (clone / ".venv" / "bin").mkdir(parents=True)
    (clone / ".venv" / "bin" / "python").symlink_to(sys.executable)
    return clone


@pytest.mark.parametrize("script, args", [("starter.py", ["--sign", EVENTS]),
                                          ("worker.py", ["--queue", "main"])])
def test_a_python_without_the_dependencies_is_told_what_to_run(
        bare_python: list[str], installed_checkout: Path, script: str, args: list[str]) -> None:
    line = assert_one_line(run(bare_python, installed_checkout / script, *args,
                               cwd=installed_checkout), script)
    assert "Tollgate's dependencies are missing (temporalio" in line
    assert f"run `.venv/bin/python {script} {' '.join(args)}`" in line


def test_without_site_packages_the_venv_python_is_refused_too() -> None:
    # The interpreter is the venv's, its packages are not on the path: what a PYTHONPATH-less
    # system python sees.
    done = run([sys.executable, "-S"], ROOT / "starter.py", EVENTS, cwd=ROOT)
    assert f"run `.venv/bin/python starter.py {EVENTS}`" in assert_one_line(done, "starter.py")


def test_a_checkout_never_installed_is_told_to_make_install(
        bare_python: list[str], tmp_path: Path) -> None:
    # A fresh clone: no .venv, no tollgate.egg-info beside the scripts.
    clone = copy_checkout(tmp_path / "clone")
    line = assert_one_line(run(bare_python, clone / "starter.py", "events.json",
                               cwd=tmp_path), "starter.py")
    assert "Tollgate is not installed in it" in line
    assert "run `make install` in clone (it makes .venv), then " \
           "`clone/.venv/bin/python clone/starter.py events.json`" in line


def test_the_venv_python_runs_the_scripts() -> None:
    done = run([sys.executable], ROOT / "starter.py", "--help", cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "Usage: python starter.py" in done.stdout


def test_an_older_python_is_named() -> None:
    assert what_is_missing((3, 10)) == "Python 3.10 is older than 3.11"
    assert what_is_missing() == ""  # this venv has everything
