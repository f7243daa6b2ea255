"""The answers kept for ``Idempotency-Key`` (``0086_idempotency_keys.sql``), by tenant, route
and key, with the sha256 of the body that first used the key."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import asyncpg

# As in action_tokens.py: the insert and the read share a snapshot, so when a concurrent request
# kept its answer first, the second half returns that one. Exactly one row either way.
KEEP_SQL = """
WITH kept AS (
    INSERT INTO idempotency_keys (tenant, route, key, body_sha256, status, answer)
    VALUES ($1, $2, $3, $4, $5, $6::jsonb)
    ON CONFLICT (tenant, route, key) DO NOTHING
    RETURNING body_sha256, status, answer
)
SELECT body_sha256, status, answer FROM kept
UNION ALL
SELECT body_sha256, status, answer FROM idempotency_keys
 WHERE tenant = $1 AND route = $2 AND key = $3 AND NOT EXISTS (SELECT 1 FROM kept)
"""


@dataclass(frozen=True)
class KeptAnswer:
    body_sha256: str
    status: int
    answer: Any


def _kept(row: asyncpg.Record | None) -> KeptAnswer | None:
    if row is None:
        return None
    return KeptAnswer(row["body_sha256"], int(row["status"]), json.loads(row["answer"]))


class IdempotencyStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def find(self, tenant: str, route: str, key: str) -> KeptAnswer | None:
        return _kept(await self.pool.fetchrow(
            "SELECT body_sha256, status, answer FROM idempotency_keys"
            " WHERE tenant = $1 AND route = $2 AND key = $3", tenant, route, key))

    async def keep(self, tenant: str, route: str, key: str, body_sha256: str, status: int,
                   answer: Any) -> KeptAnswer:
        """Keep this answer for the key, or return the one a concurrent request kept first."""
        kept = _kept(await self.pool.fetchrow(
            KEEP_SQL, tenant, route, key, body_sha256, status, json.dumps(answer)))
        assert kept is not None  # the statement returns one row by construction
        return kept
