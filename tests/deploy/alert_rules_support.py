"""For the alert rules' tests: promtool run on the repository's rules folder."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

RULES = Path(__file__).resolve().parents[2] / "deploy" / "prometheus"


def promtool(*args: str) -> subprocess.CompletedProcess[str]:
    tool = shutil.which("promtool")
    if tool is None:
        pytest.skip("promtool is missing: install the Debian package prometheus "
                    "(apt-get install -y --no-install-recommends prometheus)")
    return subprocess.run([tool, *args], cwd=RULES, capture_output=True, text=True,  # noqa: S603
                          timeout=120, check=False)
