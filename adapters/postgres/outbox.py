"""PostgreSQL outbox for HTTP intake: the intake record and the outbox row in one transaction.

The HTTP service answers a producer from here alone, so its answer never waits for Temporal (or
a model); the relay (``tollgate.http.relay``) moves live rows into Temporal, oldest first per
tenant and entity. A row is live until it is sent, moved aside after its bounded tries
(``parked_at``, with a reason) or dropped by an operator (migration 0080, ADR 0030). Every value
stored goes through ``pgtext`` first: a posted body PostgreSQL cannot hold must still be recorded.
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

from adapters.postgres.pgtext import pg_text


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
#: A row is live (the relay's to send) while none of these is set.
LIVE = "sent_at IS NULL AND parked_at IS NULL AND dropped_at IS NULL"

#: The oldest live row that is due and has no older live row of its own tenant and entity
#: (a row whose body named no entity waits for nobody). Rows another relay holds are skipped.
_NEXT_SQL = f"""
SELECT o.id, o.workflow_id, o.raw, o.attempts FROM outbox o
WHERE o.{LIVE.replace(" AND ", " AND o.")}
  AND (o.next_attempt_at IS NULL OR o.next_attempt_at <= now())
  AND NOT EXISTS (SELECT 1 FROM outbox p WHERE p.tenant_id = o.tenant_id
                  AND p.entity_id = o.entity_id AND p.id < o.id
                  AND p.{LIVE.replace(" AND ", " AND p.")})
ORDER BY o.id LIMIT 1 FOR UPDATE OF o SKIP LOCKED
"""

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
        workflow_id, tenant_id = pg_text(workflow_id), pg_text(tenant_id)
        await conn.execute(
            "INSERT INTO http_intake (workflow_id, tenant_id, payload_fingerprint, status,"
            " reason_code, received_at) VALUES ($1, $2, $3, $4, $5, $6)",
            workflow_id, tenant_id, fingerprint, status, reason_code, received_at)
        await conn.execute(
            "INSERT INTO outbox (workflow_id, tenant_id, entity_id, raw, received_at)"
            " VALUES ($1, $2, $3, $4, $5)",
            workflow_id, tenant_id, _entity_of(raw), pg_text(raw), received_at)

    @asynccontextmanager
    async def next_unsent(self) -> AsyncIterator[tuple[OutboxRow | None, _Settle]]:
        """The next row to send (``_NEXT_SQL``), locked until the block ends (another relay skips
        it); call one of ``settle``'s methods inside the block."""
        async with self.pool.acquire() as conn, conn.transaction():
            rec = await conn.fetchrow(_NEXT_SQL)
            row = OutboxRow(**dict(rec)) if rec else None
            yield row, _Settle(conn, row)

    async def backlog(self) -> int:
        """Live rows: posted, neither sent, moved aside nor dropped."""
        return int(await self.pool.fetchval(f"SELECT count(*) FROM outbox WHERE {LIVE}"))


def _entity_of(raw: str) -> str | None:
    """The event's ``entity_id`` (what order is kept by), or None when the body does not say."""
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    entity = data.get("entity_id") if isinstance(data, dict) else None
    return pg_text(entity) if isinstance(entity, str) else None


class _Settle:
    def __init__(self, conn: PoolConnectionProxy, row: OutboxRow | None) -> None:
        self._conn, self._row = conn, row

    async def sent(self, ack_status: str) -> None:
        assert self._row is not None
        await self._conn.execute(
            "UPDATE outbox SET sent_at = now(), ack_status = $2, attempts = attempts + 1,"
            " last_error = NULL WHERE id = $1", self._row.id, ack_status)

    async def failed(self, error_code: str, *, retry_in_s: float, park_after: int) -> bool:
        """One more failed try of this row: due again in ``retry_in_s``, or moved aside (reason
        ``delivery_failed``) when this was try ``park_after``. True when it was moved aside."""
        assert self._row is not None
        parked = await self._conn.fetchval(
            "UPDATE outbox SET attempts = attempts + 1, last_error = $2,"
            " next_attempt_at = now() + make_interval(secs => $3),"
            " parked_at = CASE WHEN attempts + 1 >= $4 THEN now() END,"
            " parked_reason = CASE WHEN attempts + 1 >= $4 THEN 'delivery_failed' END"
            " WHERE id = $1 RETURNING parked_at IS NOT NULL",
            self._row.id, pg_text(error_code[:200]), retry_in_s, park_after)
        return bool(parked)

    async def unreachable(self, error_code: str) -> None:
        """Temporal could not be reached: not this row's fault, so no try is counted."""
        assert self._row is not None
        await self._conn.execute("UPDATE outbox SET last_error = $2 WHERE id = $1",
                                 self._row.id, pg_text(error_code[:200]))
