"""The action token's store: the approval a token is minted for, and the token's single use.

The token itself is never stored (it is a bearer credential; the run's history holds it,
encrypted by the codec). Only its id is, once a send takes it (``0082_action_token_uses.sql``).
"""

from __future__ import annotations

import asyncpg

# The insert and the read see the same snapshot: when the insert found the id taken, the second
# half returns the row that holds it. Exactly one row either way.
FIRST_USE_SQL = """
WITH taken AS (
    INSERT INTO action_token_uses (token_id, action_key, use_id) VALUES ($1, $2, $3)
    ON CONFLICT (token_id) DO NOTHING
    RETURNING use_id
)
SELECT use_id FROM taken
UNION ALL
SELECT use_id FROM action_token_uses WHERE token_id = $1 AND NOT EXISTS (SELECT 1 FROM taken)
"""


class ActionTokenStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def has_approval(self, workflow_id: str, draft_version: int) -> bool:
        return bool(await self.pool.fetchval(
            "SELECT 1 FROM review_decisions WHERE workflow_id = $1 AND draft_version = $2"
            " AND decision = 'approve' AND accepted LIMIT 1", workflow_id, draft_version))

    async def first_use(self, token_id: str, action_key: str, use_id: str) -> bool:
        """True when ``use_id`` holds the token: it took it now, or took it on an earlier
        attempt of the same send; False when another use holds it."""
        holder = await self.pool.fetchval(FIRST_USE_SQL, token_id, action_key, use_id)
        return bool(holder == use_id)

    async def approved_draft(self, workflow_id: str, draft_version: int) -> tuple[bool, str | None]:
        """One read: is an accepted approval of the version on record, and the draft's text
        as PostgreSQL holds it now (the source of truth the fingerprint is recomputed from)."""
        row = await self.pool.fetchrow(
            "SELECT EXISTS (SELECT 1 FROM review_decisions WHERE workflow_id = $1"
            " AND draft_version = $2 AND decision = 'approve' AND accepted) AS approved,"
            " (SELECT draft->>'message' FROM drafts WHERE workflow_id = $1 AND version = $2)"
            " AS body", workflow_id, draft_version)
        assert row is not None  # a SELECT of two scalar subqueries always returns one row
        return bool(row["approved"]), row["body"]

    async def used_by(self, token_id: str, action_key: str, use_id: str) -> bool:
        return bool(await self.pool.fetchval(
            "SELECT 1 FROM action_token_uses WHERE token_id = $1 AND action_key = $2"
            " AND use_id = $3", token_id, action_key, use_id))
