"""PostgreSQL's recorded end of an event, asked for a repeat whose run has closed (ADR 0062).

A closed run's result is what the run saw; an end recorded after it (a dead letter's replay
that settled the write, ADR 0061) is PostgreSQL's alone, and PostgreSQL is the event's record.
The producer's answer must not wait on it or fail because of it: one short, bounded lookup,
and on any trouble (no database, a timeout, an error) no answer, so Temporal's stands.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

import asyncpg
import structlog

from adapters.broker.cancel import raise_if_cancelled
from adapters.postgres.event_end import recorded_end
from contracts import FinalOutcome

log = structlog.get_logger("tollgate.intake")

#: The recorded end of a workflow id, or None (no database, no row, no answer in time).
RecordedEnd = Callable[[str], Awaitable[FinalOutcome | None]]
#: How long a producer's repeat waits for PostgreSQL before Temporal's answer stands.
LOOKUP_TIMEOUT_S = 2.0


def recorded_ends(pool: asyncpg.Pool, *, timeout_s: float = LOOKUP_TIMEOUT_S) -> RecordedEnd:
    """The lookup on ``pool``, bounded by ``timeout_s`` and never raising (but a cancel)."""

    async def lookup(workflow_id: str) -> FinalOutcome | None:
        try:
            async with asyncio.timeout(timeout_s):
                return await recorded_end(pool, workflow_id)
        except Exception as exc:
            # Outside the timeout's block: a cancel still counted here is the caller's own.
            raise_if_cancelled(exc)
            log.warning("repeat_record_unavailable", error=type(exc).__name__)
            return None

    return lookup


@contextlib.asynccontextmanager
async def recorded_ends_at(
        dsn: str | None, *, timeout_s: float = LOOKUP_TIMEOUT_S,
) -> AsyncIterator[RecordedEnd | None]:
    """The lookup on a pool of its own for ``dsn`` (None without one), for a process that has
    no pool (``tollgate submit``, the Redis consumer). The pool connects on its first lookup
    only: most deliveries are no repeat of a closed run and never need it."""
    if not dsn:
        yield None
        return
    pool = await asyncpg.create_pool(dsn, min_size=0, max_size=1)  # no connection yet
    try:
        yield recorded_ends(pool, timeout_s=timeout_s)
    finally:
        try:
            async with asyncio.timeout(timeout_s):
                await pool.close()
        except Exception:  # a connection that does not close in time is dropped
            pool.terminate()
