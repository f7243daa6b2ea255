"""The wheel's build step bakes what the release gate certifies (docs/rollout.md, ADR 0029).

``pyproject.toml`` names ``BuildPy`` as setuptools' ``build_py``. Besides the modules it writes
``tollgate/ops/_build.py`` (the commit the wheel is built from) and copies the fixture catalogue,
``docs/fixtures.md``, to ``tollgate/ops/fixtures.md``, so an install with no git and no docs/
(the image) still knows what was certified. The commit comes from ``TOLLGATE_COMMIT`` (the
image's build arg), else ``git rev-parse HEAD`` in the source tree (``-dirty`` with tracked
changes), else ``unknown``, which no certification matches. An editable install gets neither
file: it reads the checkout (``tollgate/ops/release_identity.py``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from setuptools.command.build_py import build_py


def source_commit(root: Path) -> str:
    # A build input, not a runtime setting: the settings tree is read by the installed code,
    # this runs once, before there is any installed code (ADR 0029).
    baked = os.environ.get("TOLLGATE_COMMIT", "").strip()
    if baked:
        return baked
    git = shutil.which("git")
    if git is None:
        return "unknown"
    try:
        head = subprocess.run([git, "rev-parse", "HEAD"], cwd=root, capture_output=True,  # noqa: S603
                              text=True, check=True, timeout=10).stdout.strip()
        dirty = subprocess.run([git, "status", "--porcelain", "--untracked-files=no"],  # noqa: S603
                               cwd=root, capture_output=True, text=True, check=True,
                               timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{head}-dirty" if dirty else head


class BuildPy(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        root = Path.cwd()
        ops = Path(self.build_lib) / "tollgate" / "ops"
        ops.mkdir(parents=True, exist_ok=True)
        (ops / "_build.py").write_text(
            '"""Written by the wheel build (deploy/build_hook.py); not in the checkout."""\n\n'
            f"COMMIT = {source_commit(root)!r}\n", encoding="utf-8")
        shutil.copyfile(root / "docs" / "fixtures.md", ops / "fixtures.md")
