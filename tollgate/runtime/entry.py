"""How a long-running process's entry point runs its main coroutine (``python worker.py``, the
Redis and the broker intakes): Ctrl-C ends it quietly, and the Temporal client is freed while
the interpreter is whole, also when a start-up check ends the process with one line. What a
start meets below it (Temporal or PostgreSQL not answering, a migration refused) is such a
line too, never a traceback: ``start_refusals``, which ``tollgate serve`` uses as well.

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
from collections.abc import Coroutine, Iterator
from typing import Any

from tollgate.runtime.exits import Failure, postgres_failure, temporal_unreachable


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


class StartRefused(SystemExit):
    """A start refused below the process, said in one line: a worker process exits 1 with it,
    as with a taken port; ``tollgate serve`` answers with the failure's own exit code."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.message)
        self.failure = failure


@contextlib.contextmanager
def start_refusals(temporal_address: str) -> Iterator[None]:
    """A start that Temporal or PostgreSQL refuses ends with its one line (``StartRefused``):
    never the database URL, which may carry a password. PostgreSQL's lines are the CLI's
    (``postgres_failure``): not answering, or answering no and what to check."""
    try:
        yield
    except Exception as exc:
        # "Failed client connect": the Temporal SDK's own words.
        if isinstance(exc, RuntimeError) and str(exc).startswith("Failed client connect"):
            raise StartRefused(temporal_unreachable(temporal_address)) from None
        if (failure := postgres_failure(exc)) is None:
            raise
        raise StartRefused(failure) from None
