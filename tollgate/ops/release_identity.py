"""What a certification certifies: the policy release in force and the code's commit.

Shared by `tollgate certify` (records it) and `tollgate ops rollout` (asks for it), so the two
can never compute it differently.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

#: The repository root (this file is tollgate/ops/release_identity.py).
ROOT = Path(__file__).resolve().parents[2]


def policy_version() -> str:
    from policies.matrix import load_matrix

    return load_matrix().version


def code_commit(root: Path = ROOT) -> str:
    """``git rev-parse HEAD``, with ``-dirty`` when tracked files differ from it (uncommitted
    code is not the code that was certified), or ``unknown`` outside a git checkout, which no
    certification can match."""
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
