"""The PostgreSQL pool every store of a process shares, and the migrations applied on start.

One pool per process; the numbered SQL files in ``adapters/migrations`` are applied once, in
order, under an advisory lock so workers starting together do not race.
"""

from __future__ import annotations

from importlib import resources

import asyncpg

from contracts.errors import RetryableError

_MIGRATION_LOCK = 0x70_11_6A_7E  # any constant; serialises concurrent start-ups


async def _keep_session(_: asyncpg.Connection) -> None:
    """Released connections skip asyncpg's reset query (advisory unlock, CLOSE ALL, UNLISTEN,
    RESET ALL): the store leaves no session state behind (no LISTEN, no session advisory locks,
    no SET, no cursors), and asyncpg still rolls back a transaction left open. It was 14 of 34
    round trips per event (docs/performance.md)."""


async def create_pool(dsn: str, *, min_size: int = 1, max_size: int = 10) -> asyncpg.Pool:
    try:
        pool = await asyncpg.create_pool(dsn, min_size=min_size, max_size=max_size,
                                         reset=_keep_session)
    except (OSError, asyncpg.PostgresError) as exc:
        reason = f"cannot connect to PostgreSQL ({type(exc).__name__})"
        raise RetryableError("db_unreachable", reason) from exc
    await migrate(pool)
    return pool


async def migrate(pool: asyncpg.Pool) -> list[str]:
    """Apply the numbered SQL files in ``adapters/migrations`` not applied yet, in order."""
    files = sorted(
        (f for f in resources.files("adapters.postgres.migrations").iterdir()
         if f.name.endswith(".sql")),
        key=lambda f: f.name,
    )
    applied: list[str] = []
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock($1)", _MIGRATION_LOCK)
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        done = {r["name"] for r in await conn.fetch("SELECT name FROM schema_migrations")}
        for f in files:
            if f.name in done:
                continue
            await conn.execute(f.read_text())
            await conn.execute("INSERT INTO schema_migrations (name) VALUES ($1)", f.name)
            applied.append(f.name)
    return applied
