"""Is the Python running a script the one Tollgate is installed in?

``starter.py`` and ``worker.py`` are run as ``python FILE`` from a checkout, and the ``python`` a
newcomer types first is rarely the project's venv: its first project import then ends in a
``ModuleNotFoundError`` traceback. Both scripts ask here first and, with the wrong interpreter,
end in one line saying what to run instead, exit 7 (a configuration problem: docs/cli.md).

Only the standard library, and nothing newer than Python 3.8 at run time: this module must
load in exactly the interpreters it refuses (the ``tollgate`` and ``tollgate.runtime`` package
files import nothing, and ``exits`` only the standard library).
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from importlib import metadata

from tollgate.runtime.exits import Exit

REQUIRED = (3, 11)
#: A requirement's distribution name: what precedes extras, versions and markers.
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _installed(name: str) -> bool:
    try:
        metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return False
    return True


def what_is_missing(version: tuple[int, ...] = tuple(sys.version_info[:2])) -> str:
    """Why this interpreter cannot run Tollgate, or "" when it can."""
    if version < REQUIRED:
        return (f"Python {'.'.join(map(str, version))} is older than "
                f"{'.'.join(map(str, REQUIRED))}")
    if not _installed("tollgate"):
        return "Tollgate is not installed in it"
    # Requirements behind a marker (extras such as dev, a platform) may rightly be absent.
    needed = [m.group(1) for m in map(_NAME.match, metadata.requires("tollgate") or [])
              if m is not None and ";" not in m.string]
    absent = [name for name in needed if not _installed(name)]
    if not absent:
        return ""
    more = f" and {len(absent) - 3} more" if len(absent) > 3 else ""
    return f"Tollgate's dependencies are missing ({', '.join(absent[:3])}{more})"


def _shown(path: str, cwd: str) -> str:
    """``path`` relative to ``cwd`` when it lies below it, else absolute."""
    inside = os.path.commonpath([path, os.path.abspath(cwd)]) == os.path.abspath(cwd)
    return os.path.relpath(path, cwd) if inside else path


def instead(script: str, args: list[str], cwd: str) -> str:
    """The command to run instead: the checkout's venv Python, said from ``cwd``."""
    checkout = os.path.dirname(os.path.abspath(script))
    venv_python = os.path.join(checkout, ".venv", "bin", "python")
    # Arguments that would not print as one plain line are left out rather than echoed.
    plain = all(arg.isprintable() for arg in args)
    line = shlex.join([_shown(venv_python, cwd), _shown(os.path.abspath(script), cwd),
                       *(args if plain else ["…"])])
    if os.path.exists(venv_python):
        return f"run `{line}`"
    where = "" if checkout == os.path.abspath(cwd) else f" in {_shown(checkout, cwd)}"
    return f"run `make install`{where} (it makes .venv), then `{line}`"


def require_installed(script: str, args: list[str]) -> None:
    """End the process in one line (exit 7) when this Python cannot run Tollgate."""
    problem = what_is_missing()
    if problem:
        sys.stderr.write(f"tollgate: this Python ({sys.executable}) cannot run "
                         f"{os.path.basename(script)}: {problem}; "
                         f"{instead(script, args, os.getcwd())}\n")
        raise SystemExit(int(Exit.CONFIG))
