"""The step watch in PostgreSQL (migrations 0090, 0091): failing steps and held sends, written
on a connection of its own, so a worker whose main pool is exhausted or whose step is failing
on that pool can still say so. Identifiers, step names, classes and codes only."""

from __future__ import annotations

import asyncio

import asyncpg

#: A held send whose event has moved on (EXECUTING or later) is over; the next hold's write
#: deletes such rows, so the table holds little more than the sends held now.
_HELD_SQL = """
WITH over AS (
    DELETE FROM send_holds h USING events e
    WHERE e.workflow_id = h.workflow_id AND e.state <> 'APPROVED' AND h.workflow_id <> $1
)
INSERT INTO send_holds (workflow_id, tenant_id, adapter) VALUES ($1, $2, $3)
ON CONFLICT (workflow_id) DO UPDATE SET checked_at = now(), adapter = EXCLUDED.adapter
"""

_FAILING_SQL = """
INSERT INTO failing_steps (workflow_id, step, tenant_id, attempts, error_class, error_code)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (workflow_id, step) DO UPDATE SET attempts = EXCLUDED.attempts,
    error_class = EXCLUDED.error_class, error_code = EXCLUDED.error_code, last_seen_at = now()
"""


class PostgresStepWatch:
    """``adapters.ports.watch.StepWatch`` on one connection of its own, opened on first use."""

    def __init__(self, dsn: str) -> None:
        self._dsn = dsn
        self._pool: asyncpg.Pool | None = None
        self._opening = asyncio.Lock()

    async def _conn_pool(self) -> asyncpg.Pool:
        async with self._opening:
            if self._pool is None:
                # The main pool applied the migrations; this one only writes two tables.
                self._pool = await asyncpg.create_pool(self._dsn, min_size=0, max_size=1)
            return self._pool

    async def failing(self, *, workflow_id: str, step: str, tenant_id: str | None,
                      attempt: int, error_class: str, error_code: str) -> None:
        await (await self._conn_pool()).execute(
            _FAILING_SQL, workflow_id, step, tenant_id, attempt, error_class, error_code)

    async def recovered(self, *, workflow_id: str, step: str) -> None:
        await (await self._conn_pool()).execute(
            "DELETE FROM failing_steps WHERE workflow_id = $1 AND step = $2", workflow_id, step)

    async def held(self, *, workflow_id: str, tenant_id: str, adapter: str) -> None:
        await (await self._conn_pool()).execute(_HELD_SQL, workflow_id, tenant_id, adapter)

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.close()
            self._pool = None
