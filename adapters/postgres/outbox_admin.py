"""What operators and probes read and do about the outbox (issue 25): the figures a stall shows
in (``/healthz``, ``/metrics``, ``ops status``), and ``tollgate ops outbox list/show/retry/drop``.

Identifiers only: workflow ids, tenants, entity ids, attempts, error codes, ages. Never ``raw``
(the posted body: it carries the customer's data). Each retry and drop is one audit row
(``audit``, as every operator action) in the transaction that changes the row.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

import asyncpg

from adapters.postgres.outbox import LIVE
from adapters.postgres.pgtext import pg_json, pg_text

#: Per tenant: live rows, the age of the oldest, rows moved aside (not yet retried or dropped).
FIGURES_SQL = f"""
SELECT tenant_id, count(*) FILTER (WHERE {LIVE}) AS depth,
       extract(epoch FROM $1 - min(received_at) FILTER (WHERE {LIVE})) AS oldest_age_s,
       count(*) FILTER (WHERE parked_at IS NOT NULL) AS moved_aside
FROM outbox WHERE sent_at IS NULL AND dropped_at IS NULL
GROUP BY tenant_id ORDER BY tenant_id
"""

_COLUMNS = ("id, workflow_id, tenant_id, entity_id, received_at, attempts, last_error,"
            " next_attempt_at, parked_at, parked_reason, dropped_at, sent_at, ack_status")

Which = Literal["aside", "live", "all"]
_WHERE: dict[str, str] = {
    "aside": "parked_at IS NOT NULL AND dropped_at IS NULL AND sent_at IS NULL",
    "live": LIVE,
    "all": "sent_at IS NULL",
}


def outbox_totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The per-tenant figures summed: what a health probe and ``ops status`` judge."""
    ages = [r["oldest_age_s"] for r in rows if r["oldest_age_s"] is not None]
    return {"depth": sum(r["depth"] for r in rows),
            "oldest_age_s": float(max(ages)) if ages else None,
            "moved_aside": sum(r["moved_aside"] for r in rows)}


class OutboxAdmin:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def figures(self, now: datetime) -> list[dict[str, Any]]:
        return [dict(r) for r in await self.pool.fetch(FIGURES_SQL, now)]

    async def totals(self, now: datetime) -> dict[str, Any]:
        return outbox_totals(await self.figures(now))

    async def rows(self, which: Which = "aside", limit: int = 100,
                   tenant: str | None = None) -> list[dict[str, Any]]:
        return [dict(r) for r in await self.pool.fetch(
            f"SELECT {_COLUMNS} FROM outbox WHERE {_WHERE[which]}"
            " AND ($2::text IS NULL OR tenant_id = $2) ORDER BY id LIMIT $1", limit, tenant)]

    async def row(self, row_id: int) -> dict[str, Any] | None:
        found = await self.pool.fetchrow(f"SELECT {_COLUMNS} FROM outbox WHERE id = $1",
                                         row_id)
        return dict(found) if found else None

    async def retry(self, row_id: int, *, actor: str, reason: str) -> bool:
        """Put a row that was moved aside back in line, its tries counted from zero (the same
        workflow id: if it did reach Temporal, the answer is a duplicate). False when the row
        is not aside (sent, dropped, live or unknown)."""
        return await self._act(
            row_id, actor, "outbox_retry", reason,
            "UPDATE outbox SET parked_at = NULL, parked_reason = NULL, attempts = 0,"
            " next_attempt_at = NULL WHERE id = $1 AND parked_at IS NOT NULL"
            " AND dropped_at IS NULL AND sent_at IS NULL RETURNING workflow_id, tenant_id")

    async def drop(self, row_id: int, *, actor: str, reason: str) -> bool:
        """Never send this row (it stays, as the record of what was posted). A live row can be
        dropped too: one that keeps failing before its tries are spent. False when the row is
        sent, already dropped or unknown."""
        return await self._act(
            row_id, actor, "outbox_drop", reason,
            "UPDATE outbox SET dropped_at = now() WHERE id = $1 AND dropped_at IS NULL"
            " AND sent_at IS NULL RETURNING workflow_id, tenant_id")

    async def _act(self, row_id: int, actor: str, action: str, reason: str, sql: str) -> bool:
        async with self.pool.acquire() as conn, conn.transaction():
            done = await conn.fetchrow(sql, row_id)
            if done is None:
                return False
            await conn.execute(
                "INSERT INTO audit (actor, action, target, detail) VALUES ($1,$2,$3,$4::jsonb)",
                pg_text(actor), action, f"outbox/{row_id}",
                pg_json({"reason": reason, "workflow_id": done["workflow_id"],
                         "tenant_id": done["tenant_id"]}))
            return True
