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

import asyncpg

from adapters.postgres.pool import MigrationChecksumError
from contracts.errors import RetryableError
from tollgate.runtime.exits import Exit, Failure, postgres_unreachable, temporal_unreachable


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
    never the database URL, which may carry a password."""
    try:
        yield
    except MigrationChecksumError as exc:  # before RuntimeError: it is one
        raise StartRefused(Failure(Exit.REFUSED, str(exc))) from None
    except RuntimeError as exc:
        if not str(exc).startswith("Failed client connect"):  # the SDK's own words
            raise
        raise StartRefused(temporal_unreachable(temporal_address)) from None
    except RetryableError as exc:
        if exc.code != "db_unreachable":
            raise
        raise StartRefused(postgres_unreachable()) from None
    except (asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
        raise StartRefused(Failure(
            Exit.REFUSED, f"PostgreSQL refused the start ({type(exc).__name__}): check "
            "DATABASE_URL's user, database and rights")) from None
