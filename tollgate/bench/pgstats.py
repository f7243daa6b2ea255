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
#: Statements the printed report shows; ``--json`` keeps every one (an A/B run of a PostgreSQL
#: change compares statements that a top 10 would drop).
TOP_STATEMENTS = 10
#: What a statement is shown as: its first characters, whitespace folded.
SHOWN_CHARS = 110
#: Active client backends by what they wait on, and autovacuum's workers by what they work on
#: ("autovacuum: VACUUM public.events"): their CPU counts as PostgreSQL's in the bench's tally
#: though no statement of Tollgate's runs there.
_WAITS = ("SELECT backend_type = 'autovacuum worker' AS vacuum, query, "
          "coalesce(wait_event_type, 'CPU') AS kind, coalesce(wait_event, '-') AS event "
          "FROM pg_stat_activity WHERE state = 'active' AND pid <> pg_backend_pid() "
          "AND backend_type IN ('client backend', 'autovacuum worker')")
_STATEMENTS = ("SELECT query, calls, total_exec_time, rows, shared_blks_hit + shared_blks_read "
               "AS blocks FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%'")


def top_statements(rows: Iterable[Mapping[str, Any]], events: int,
                   limit: int | None = None) -> list[dict[str, Any]]:
    """The statements, most executor time first (the first ``limit``, else all): calls and ms
    per event; ms, rows and shared blocks (hit or read) per call: a statement whose rows or
    blocks per call grow with what the tables hold scans. ``events``: the phase's Tollgate
    events (at least 1)."""
    per = max(events, 1)
    ranked = sorted(rows, key=lambda r: r["total_exec_time"], reverse=True)[:limit]
    return [{"statement": " ".join(r["query"].split())[:SHOWN_CHARS],
             "calls_per_event": round(r["calls"] / per, 2),
             "ms_per_event": round(r["total_exec_time"] / per, 2),
             "ms_per_call": _per_call(r, "total_exec_time", 3),
             "rows_per_call": _per_call(r, "rows", 1),
             "blocks_per_call": _per_call(r, "blocks", 1)}
            for r in ranked]


def _per_call(row: Mapping[str, Any], key: str, digits: int) -> float | None:
    return round(row.get(key, 0) / row["calls"], digits) if row["calls"] else None


def wait_shares(waits: Mapping[str, int], samples: int) -> dict[str, float]:
    """Active backends per sample, by what they wait on ("CPU:-" when on CPU), most first."""
    if not samples:
        return {}
    return {k: round(v / samples, 3) for k, v in sorted(waits.items(), key=lambda kv: -kv[1])}


class PgStats:
    def __init__(self, url: str) -> None:
        self.url = url
        self.waits: Counter[str] = Counter()
        self.autovacuum: Counter[str] = Counter()
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
        self.autovacuum.clear()
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
                "autovacuum_by_work": wait_shares(self.autovacuum, self.samples),
                "wait_samples": self.samples}

    async def _sample(self) -> None:
        connection = await asyncpg.connect(self.url)
        try:
            while True:
                for row in await connection.fetch(_WAITS):
                    if row["vacuum"]:
                        self.autovacuum[" ".join(str(row["query"]).split())[:SHOWN_CHARS]] += 1
                    else:
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
