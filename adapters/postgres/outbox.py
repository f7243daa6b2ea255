"""PostgreSQL outbox for HTTP intake: the intake record and the outbox row in one transaction.

The HTTP service answers a producer from here alone, so its answer never waits for Temporal (or
a model); the relay (``tollgate.http.relay``) moves unsent rows into Temporal, oldest first.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

import asyncpg
from asyncpg.pool import PoolConnectionProxy


@dataclass(frozen=True)
class Delivery:
    """What the store knows about one posted event after recording it.

    ``kind``: ``new`` (written now, outbox row queued), ``duplicate`` (same key, same payload
    seen before), ``conflict`` (same key, another payload; this delivery is queued for
    quarantine under ``conflict_workflow_id``).
    """

    kind: Literal["new", "duplicate", "conflict"]
    status: str | None = None
    reason_code: str | None = None
    state: str | None = None
    outcome: dict[str, Any] | None = None


@dataclass(frozen=True)
class OutboxRow:
    id: int
    workflow_id: str
    raw: str
    attempts: int


_EARLIER_SQL = """
SELECT h.payload_fingerprint AS h_fp, h.status, h.reason_code,
       e.payload_fingerprint AS e_fp, e.state, e.reason_code AS e_reason, e.outcome
FROM (SELECT $1::text AS workflow_id) k
LEFT JOIN http_intake h USING (workflow_id)
LEFT JOIN events e USING (workflow_id)
"""

#: Counted in the transaction that answers "duplicate" (docs/metrics.md): the answer and the
#: count commit together, under the key's lock.
COUNT_DUPLICATE_SQL = """
INSERT INTO intake_duplicates (tenant_id, channel, stage, n) VALUES ($1, $2, $3, 1)
ON CONFLICT (tenant_id, channel, stage) DO UPDATE SET n = intake_duplicates.n + 1
"""


class OutboxStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def record(
        self, *, workflow_id: str, conflict_workflow_id: str, tenant_id: str,
        fingerprint: str | None, status: str, reason_code: str | None, raw: str,
        received_at: datetime,
    ) -> Delivery:
        """Record one delivery; a new one (or a conflicting one) gets its outbox row in the same
        transaction. Concurrent posts of one key are serialised by a transaction lock on it."""
        async with self.pool.acquire() as conn, conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(hashtext($1))", workflow_id)
            earlier = await conn.fetchrow(_EARLIER_SQL, workflow_id)
            assert earlier is not None
            seen_fp = earlier["h_fp"] or earlier["e_fp"]
            if earlier["status"] is None and earlier["state"] is None:
                await self._queue(conn, workflow_id, tenant_id, fingerprint, status,
                                  reason_code, raw, received_at)
                return Delivery(kind="new", status=status, reason_code=reason_code)
            outcome = json.loads(earlier["outcome"]) if earlier["outcome"] else None
            found = Delivery(kind="duplicate", status=earlier["status"] or "accepted",
                             reason_code=earlier["reason_code"] or earlier["e_reason"],
                             state=earlier["state"], outcome=outcome)
            if seen_fp == fingerprint:
                await conn.execute(COUNT_DUPLICATE_SQL, tenant_id, "http",
                                   "after_close" if outcome else "in_flight")
                return found
            # Quarantined once per distinct body, through the ordinary path: never dropped.
            taken = await conn.fetchval(
                "SELECT 1 FROM http_intake WHERE workflow_id = $1", conflict_workflow_id)
            if not taken:
                await self._queue(conn, conflict_workflow_id, tenant_id, fingerprint, "invalid",
                                  "idempotency_conflict", raw, received_at)
            return Delivery(kind="conflict", status="invalid", reason_code="idempotency_conflict",
                            state=found.state)

    @staticmethod
    async def _queue(
        conn: PoolConnectionProxy, workflow_id: str, tenant_id: str, fingerprint: str | None,
        status: str, reason_code: str | None, raw: str, received_at: datetime,
    ) -> None:
        await conn.execute(
            "INSERT INTO http_intake (workflow_id, tenant_id, payload_fingerprint, status,"
            " reason_code, received_at) VALUES ($1, $2, $3, $4, $5, $6)",
            workflow_id, tenant_id, fingerprint, status, reason_code, received_at)
        await conn.execute(
            "INSERT INTO outbox (workflow_id, tenant_id, raw, received_at)"
            " VALUES ($1, $2, $3, $4)", workflow_id, tenant_id, raw, received_at)

    @asynccontextmanager
    async def next_unsent(self) -> AsyncIterator[tuple[OutboxRow | None, _Settle]]:
        """The oldest unsent row, locked until the block ends (another relay skips it); call
        ``settle.sent(...)`` or ``settle.failed(...)`` inside the block."""
        async with self.pool.acquire() as conn, conn.transaction():
            rec = await conn.fetchrow(
                "SELECT id, workflow_id, raw, attempts FROM outbox WHERE sent_at IS NULL"
                " ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED")
            row = OutboxRow(**dict(rec)) if rec else None
            yield row, _Settle(conn, row)

    async def backlog(self) -> int:
        return int(await self.pool.fetchval("SELECT count(*) FROM outbox WHERE sent_at IS NULL"))


class _Settle:
    def __init__(self, conn: PoolConnectionProxy, row: OutboxRow | None) -> None:
        self._conn, self._row = conn, row

    async def sent(self, ack_status: str) -> None:
        assert self._row is not None
        await self._conn.execute(
            "UPDATE outbox SET sent_at = now(), ack_status = $2, attempts = attempts + 1,"
            " last_error = NULL WHERE id = $1", self._row.id, ack_status)

    async def failed(self, error: str) -> None:
        assert self._row is not None
        await self._conn.execute(
            "UPDATE outbox SET attempts = attempts + 1, last_error = $2 WHERE id = $1",
            self._row.id, error[:500])
