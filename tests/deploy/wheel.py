"""The wheel as a plain install gets it, built from what the image's build stage copies and
installed into a folder outside the checkout (ADR 0023).

``Installed.run`` starts this venv's interpreter without its site hook, so the editable install
(whose import hook maps ``tollgate`` to the checkout) stays out: the installed folder comes
first on the path and the third-party packages after it, nothing of the checkout.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from dataclasses import dataclass
from pathlib import Path

from tests.deploy.files import DEPLOY, ROOT
from tollgate.ops.release_identity import code_commit

#: The packages the wheel must leave out.
TOOLS = ("tollgate/dev", "tollgate/bench", "tollgate/chaos")


def _copies(stage: str) -> list[tuple[list[str], str]]:
    """(sources, destination) of each COPY from the build context in the Dockerfile's stage
    named ``stage``."""
    text = (DEPLOY / "Dockerfile").read_text()
    (body,) = [b for b in re.split(r"^FROM\s", text, flags=re.MULTILINE)[1:]
               if re.match(rf"\S+\s+AS\s+{stage}\s", b)]
    return [(line.split()[:-1], line.split()[-1])
            for line in re.findall(r"^COPY\s+(?!--)(.+)$", body, re.MULTILINE)]


def build_stage_sources() -> list[str]:
    """What the Dockerfile's build stage copies from the checkout, so that the wheel built here
    is the one the image installs."""
    return [p.rstrip("/") for sources, _ in _copies("build") for p in sources]


def lay_out_standins_image(root: Path) -> Path:
    """The files the ``standins`` stage copies from the checkout, under ``root`` as under the
    image's /; returns where its entry point's script is."""
    for sources, dest in _copies("standins"):
        (source,) = sources
        where = root / dest.lstrip("/")
        if source.endswith("/"):
            shutil.copytree(ROOT / source, where,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            where.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / source, where)
    return root / "opt" / "tollgate-demo" / "standins.py"


def build_wheel(work: Path) -> Path:
    """pip builds the wheel (its own isolated build environment, from the configured index)
    from a copy, so that the checkout gets no build/ or egg-info."""
    src = work / "src"
    src.mkdir()
    for name in build_stage_sources():
        origin = ROOT / name
        if origin.is_dir():
            shutil.copytree(origin, src / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(origin, src / name)
    # As the image's build arg does: the copy has no .git to read the commit from.
    env = {**os.environ, "TOLLGATE_COMMIT": code_commit()}
    done = subprocess.run(  # noqa: S603 - this interpreter's pip on our own sources
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(work / "dist"),
         str(src)], cwd=work, capture_output=True, text=True, timeout=600, check=False, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    (wheel,) = (work / "dist").glob("tollgate-*.whl")
    return wheel


def wheel_files(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        return archive.namelist()


@dataclass(frozen=True)
class Installed:
    wheel: Path
    target: Path
    #: A folder outside the checkout, the commands' working directory.
    cwd: Path

    def run(self, *args: str, path: Path | None = None,
            timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """``python -S ARGS`` with the installed folder (or ``path``) before the venv's
        third-party packages."""
        site = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
        env["PYTHONPATH"] = os.pathsep.join([str(path or self.target), *site])
        return subprocess.run([sys.executable, "-S", *args], cwd=self.cwd, env=env,  # noqa: S603
                              capture_output=True, text=True, timeout=timeout, check=False)

    def tollgate(self, *args: str, path: Path | None = None
                 ) -> subprocess.CompletedProcess[str]:
        """The console script's ``main`` with ARGS, as ``tollgate ARGS`` runs it."""
        return self.run("-c", "from tollgate.cli import main; main()", *args, path=path)


def install(work: Path) -> Installed:
    wheel = build_wheel(work)
    target = work / "site"
    done = subprocess.run(  # noqa: S603
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target),
         str(wheel)], cwd=work, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    cwd = work / "elsewhere"
    cwd.mkdir()
    return Installed(wheel, target, cwd)
