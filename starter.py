"""Producer entry point: ``python starter.py FILE.json`` (or ``-`` for stdin), the same as
``tollgate submit``. The API lives in ``tollgate.intake.submit``; ``starter.submit`` stays
importable; ``read_source`` and ``split_events`` come from ``tollgate.intake.source``.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if __name__ == "__main__":
    # Before anything that needs the dependencies: under a Python without them (not the venv's),
    # one line saying what to run instead, exit 7, rather than an import traceback.
    from tollgate.runtime.interpreter import require_installed

    require_installed(__file__, sys.argv[1:])

if TYPE_CHECKING:
    from tollgate.intake.source import read_source, split_events
    from tollgate.intake.submit import describe, submit, submit_all

__all__ = ["describe", "main", "read_source", "split_events", "submit", "submit_all"]
#: Where each name of the API lives.
_HOMES = {"describe": "tollgate.intake.submit", "read_source": "tollgate.intake.source",
          "split_events": "tollgate.intake.source", "submit": "tollgate.intake.submit",
          "submit_all": "tollgate.intake.submit"}


def __getattr__(name: str) -> Any:
    # The API is imported when asked for (PEP 562): run as a script, this file hands the command
    # line to `tollgate submit`, which imports what a submit needs when it needs it (a file
    # that is not there stops before the Temporal SDK; docs/performance.md, "CLI start-up").
    if name in _HOMES:
        import importlib

        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(argv: list[str] | None = None) -> int:
    from tollgate.cli import cli

    args = sys.argv[1:] if argv is None else argv
    return cli.main(["submit", *args], prog_name="python starter.py", standalone_mode=False) or 0


if __name__ == "__main__":
    from tollgate.cli import main as cli_main

    cli_main(["submit", *sys.argv[1:]], prog_name="python starter.py")
