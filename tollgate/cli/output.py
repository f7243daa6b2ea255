"""What a command writes to its reader: records as JSON or as a table, and the end of the
process, flushed, with the exit code of a reader that stopped reading (`| head -1`)."""

from __future__ import annotations

import gc
import json
import os
import sys
from collections.abc import Sequence
from contextlib import suppress
from typing import Any

import click

#: The exit code of a command whose reader closed its standard output early (`| head -1`):
#: 128 + SIGPIPE, what a shell reports for any Unix tool cut off that way (docs/cli.md).
CLOSED_OUTPUT = 141


def finish(code: int) -> None:
    """Exit with ``code``, once the Temporal client is really gone.

    Why the collection: the SDK's client sits in a reference cycle, so without it the client is
    only freed by the collection that runs during interpreter finalisation. Its Rust side is
    then dropped on a runtime thread that calls back into a finalising interpreter, and the
    process dies after having printed the right answer: ``Fatal Python error:
    PyGILState_Release`` (exit 134, about one run in five here; temporalio/sdk-python issue
    300). Collected here, while the interpreter is whole, the drop is an ordinary one.
    """
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        code = closed_output()
    with suppress(BrokenPipeError):
        sys.stderr.flush()
    gc.collect()
    sys.exit(code)


def closed_output() -> int:
    """Point standard output at /dev/null, so that the interpreter's last flush of what is
    still buffered cannot fail again ("Exception ignored ... BrokenPipeError", exit 120), and
    return the exit code of a command whose reader stopped reading."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no real stdout (a test's capture): nothing left to flush
        pass
    return CLOSED_OUTPUT


def _reader_gone() -> None:
    raise BrokenPipeError


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, default=str))


def table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Rows as a borderless table; wide enough off a terminal that nothing wraps."""
    from rich.console import Console
    from rich.table import Table

    out = Console(width=None if sys.stdout.isatty() else 240, highlight=False,
                  soft_wrap=True)
    # Rich would exit 1 itself when the reader has gone; let ``run`` end it like any write.
    out.on_broken_pipe = _reader_gone  # type: ignore[method-assign]
    grid = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    for name in columns:
        grid.add_column(name, no_wrap=True)
    for row in rows:
        grid.add_row(*(str(v) for v in row))
    out.print(grid)

