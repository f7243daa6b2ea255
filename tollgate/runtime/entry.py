"""How a long-running process's entry point runs its main coroutine (``python worker.py``, the
Redis intake): Ctrl-C ends it quietly, and the Temporal client is freed while the interpreter
is whole, also when a start-up check ends the process with one line.

Why the collection: the SDK's client sits in a reference cycle, so it is otherwise freed by
the collection that runs during interpreter finalisation; its Rust side is then dropped on a
runtime thread that calls back into a finalising interpreter, and the process aborts
(``Fatal Python error: PyGILState_Release``, exit -6 where 1 was due: one start in ten with a
taken health port, tests/deploy/test_worker_start.py). The CLI does the same in
``tollgate.cli.output.finish``. A ``SystemExit`` raised inside the coroutine carries the frames
that hold the client, so it is let go of before the collection and raised again after it.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import sys
from collections.abc import Coroutine
from typing import Any


def run_main(main: Coroutine[Any, Any, None]) -> None:
    """``asyncio.run(main)``; a ``SystemExit`` from it exits after the collection."""
    stop: int | str | None = None
    refused = False
    try:
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(main)
    except SystemExit as exc:  # a port taken, a setting refused: its one line, after
        stop, refused = exc.code, True
    gc.collect()
    if refused:
        sys.exit(stop)
