"""``tollgate bench --pg-stats``: what PostgreSQL spends its time on during each phase's measured
rounds, from ``pg_stat_statements`` (statements inside triggers and functions too) and from
``pg_stat_activity`` sampled every ``SAMPLE_S`` for what active backends wait on.

The embedded PostgreSQL 18 ships the extension but ``tollgate dev`` does not preload it (it
needs a restart and costs every statement a little), so the bench preloads it on its own stack
only, before any worker connects. Only Tollgate talks to PostgreSQL, so every figure is
Tollgate's. Executor time includes lock and I/O waits: read it beside the wait counts.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

import asyncpg

from tollgate.dev.stack import DevStack

SAMPLE_S = 0.05
TOP_STATEMENTS = 10
#: What a statement is shown as: its first characters, whitespace folded.
SHOWN_CHARS = 110
_WAITS = ("SELECT coalesce(wait_event_type, 'CPU') AS kind, coalesce(wait_event, '-') AS event "
          "FROM pg_stat_activity WHERE state = 'active' AND pid <> pg_backend_pid() "
          "AND backend_type = 'client backend'")
_STATEMENTS = ("SELECT query, calls, total_exec_time, rows FROM pg_stat_statements "
               "WHERE query NOT LIKE '%pg_stat_statements%'")


def top_statements(rows: Iterable[Mapping[str, Any]], events: int,
                   limit: int = TOP_STATEMENTS) -> list[dict[str, Any]]:
    """The ``limit`` statements with the most executor time: calls and ms per event, ms per
    call. ``events``: the phase's Tollgate events (at least 1)."""
    per = max(events, 1)
    ranked = sorted(rows, key=lambda r: r["total_exec_time"], reverse=True)[:limit]
    return [{"statement": " ".join(r["query"].split())[:SHOWN_CHARS],
             "calls_per_event": round(r["calls"] / per, 2),
             "ms_per_event": round(r["total_exec_time"] / per, 2),
             "ms_per_call": round(r["total_exec_time"] / r["calls"], 3) if r["calls"] else None}
            for r in ranked]


def wait_shares(waits: Mapping[str, int], samples: int) -> dict[str, float]:
    """Active backends per sample, by what they wait on ("CPU:-" when on CPU), most first."""
    if not samples:
        return {}
    return {k: round(v / samples, 3) for k, v in sorted(waits.items(), key=lambda kv: -kv[1])}


class PgStats:
    def __init__(self, url: str) -> None:
        self.url = url
        self.waits: Counter[str] = Counter()
        self.samples = 0
        self._task: asyncio.Task[None] | None = None

    @classmethod
    async def enable(cls, stack: DevStack) -> PgStats:
        """Preloads the extension on the bench's own PostgreSQL (one restart) and creates it."""
        assert stack.database_url is not None
        await _execute(stack.database_url,
                       "ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'",
                       "ALTER SYSTEM SET pg_stat_statements.track = 'all'")
        await asyncio.to_thread(stack.restart_postgres)
        await _execute(stack.database_url, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        return cls(stack.database_url)

    async def start(self) -> None:
        """Forget what came before (migrations, warm-up) and start sampling waits."""
        await _execute(self.url, "SELECT pg_stat_statements_reset()")
        self.waits.clear()
        self.samples = 0
        self._task = asyncio.create_task(self._sample())

    async def stop(self, events: int) -> dict[str, Any]:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        connection = await asyncpg.connect(self.url)
        try:
            rows = await connection.fetch(_STATEMENTS)
        finally:
            await connection.close()
        return {"statements": top_statements([dict(r) for r in rows], events),
                "active_backends_by_wait": wait_shares(self.waits, self.samples),
                "wait_samples": self.samples}

    async def _sample(self) -> None:
        connection = await asyncpg.connect(self.url)
        try:
            while True:
                for row in await connection.fetch(_WAITS):
                    self.waits[f"{row['kind']}:{row['event']}"] += 1
                self.samples += 1
                await asyncio.sleep(SAMPLE_S)
        finally:
            await connection.close()


async def _execute(url: str, *statements: str) -> None:
    connection = await asyncpg.connect(url)
    try:
        for statement in statements:
            await connection.execute(statement)
    finally:
        await connection.close()
