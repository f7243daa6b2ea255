"""`PostgresStore.listed_flags`: the flag counts of many listed drafts in one read, each keyed by
(workflow id, draft version); a draft the table does not hold is left out, so that `tollgate
review list` asks that run instead of printing a count nobody stored."""

from __future__ import annotations

import json

import asyncpg

from adapters.postgres.store import PostgresStore
from tests.conftest import fresh_key


async def draft(pool: asyncpg.Pool, workflow_id: str, version: int, flags: int) -> None:
    await pool.execute(
        "INSERT INTO drafts (workflow_id, version, status, provider, model, prompt_version,"
        " flags) VALUES ($1, $2, 'drafted', 'offline', 'offline', 'p1', $3::jsonb)",
        workflow_id, version, json.dumps([{"rule": "r"}] * flags))


async def test_each_listed_draft_gets_its_own_versions_count(pool: asyncpg.Pool) -> None:
    a, b = (f"event/acme/{fresh_key()}" for _ in range(2))
    await draft(pool, a, 1, 3)
    await draft(pool, a, 2, 1)
    await draft(pool, b, 1, 0)
    store = PostgresStore(pool)
    found = await store.listed_flags([(a, 2), (b, 1), (b, 2), ("event/acme/none", 1)])
    assert found == {(a, 2): 1, (b, 1): 0}
    assert await store.listed_flags([]) == {}
