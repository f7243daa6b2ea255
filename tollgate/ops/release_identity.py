"""What a certification certifies: the policy release in force, the code's commit and the
fixture catalogue.

Shared by `tollgate certify` (records it) and `tollgate ops rollout` (asks for it), so the two
can never compute it differently. An installed wheel (the image) carries its commit and its
catalogue, written by the build (``deploy/build_hook.py``: ``tollgate/ops/_build.py`` and
``tollgate/ops/fixtures.md``); only an editable install, which has neither, reads the checkout
(``git rev-parse``, ``docs/fixtures.md``).
"""

from __future__ import annotations

import importlib
import shutil
import subprocess
from importlib import metadata
from pathlib import Path

#: The repository root of an editable install (this file is tollgate/ops/release_identity.py).
ROOT = Path(__file__).resolve().parents[2]
_PACKAGED = Path(__file__).resolve().parent / "fixtures.md"


def policy_version() -> str:
    from policies.matrix import load_matrix

    return load_matrix().version


def package_version() -> str:
    try:
        return metadata.version("tollgate")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def baked_commit() -> str | None:
    """The commit the build wrote into the package, None for an editable install."""
    try:
        build = importlib.import_module("tollgate.ops._build")
    except ImportError:
        return None
    return str(build.COMMIT)


def code_commit() -> str:
    """The commit baked into the package; else (an editable install) the checkout's."""
    baked = baked_commit()
    return baked if baked is not None else checkout_commit(ROOT)


def checkout_commit(root: Path) -> str:
    """``git rev-parse HEAD`` in ``root``, with ``-dirty`` when tracked files differ from it
    (uncommitted code is not the code that was certified), or ``unknown`` (no git, not a
    checkout), which no certification can match."""
    git = shutil.which("git")
    if git is None:
        return "unknown"
    # Fixed arguments, the git found on PATH.
    try:
        head = subprocess.run(  # noqa: S603
            [git, "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True,
            timeout=10).stdout.strip()
        dirty = subprocess.run(  # noqa: S603
            [git, "status", "--porcelain", "--untracked-files=no"], cwd=root,
            capture_output=True, text=True, check=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{head}-dirty" if dirty else head


def catalogue_file() -> Path:
    """The fixture catalogue shipped in the package, else the checkout's docs/fixtures.md."""
    return _PACKAGED if _PACKAGED.exists() else ROOT / "docs" / "fixtures.md"
