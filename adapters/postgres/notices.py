"""Receipts for reviewer notices: which review steps are due a notice, and what became of it.

A row is claimed (PENDING) before the send and settled after it. A send whose outcome is
unknown (the request left, no answer) is marked UNKNOWN and never repeated: a notice may be
missed, never doubled, like any side effect here.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import asyncpg

#: Give up on a notice whose channel refused it this many times (it stays FAILED, visible).
MAX_ATTEMPTS = 5

_DUE_SQL = """
SELECT e.workflow_id, e.tenant_id, e.event_type, e.review_due_at, s.step,
       e.workflow_id || '#' || COALESCE(e.artifact_version, 0) || '#' || s.step AS notice_key
FROM events e
CROSS JOIN LATERAL (VALUES
    ('opened', e.state = 'AWAITING_REVIEW'),
    ('sla', e.state = 'AWAITING_REVIEW' AND e.review_due_at <= $1),
    ('expired', e.state = 'EXPIRED')) AS s(step, due)
WHERE e.state IN ('AWAITING_REVIEW', 'EXPIRED') AND s.due
  AND NOT EXISTS (SELECT 1 FROM review_notices n WHERE n.notice_key =
        e.workflow_id || '#' || COALESCE(e.artifact_version, 0) || '#' || s.step
        AND (n.status <> 'FAILED' OR n.attempts >= $2))
ORDER BY e.updated_at, s.step
LIMIT $3
"""


@dataclass(frozen=True)
class DueNotice:
    notice_key: str
    workflow_id: str
    tenant_id: str
    event_type: str
    step: str
    review_due_at: datetime | None


class NoticeStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def due(self, now: datetime, limit: int = 50) -> list[DueNotice]:
        rows = await self.pool.fetch(_DUE_SQL, now, MAX_ATTEMPTS, limit)
        return [DueNotice(**dict(r)) for r in rows]

    async def claim(self, notice: DueNotice, channel: str) -> bool:
        """Write the receipt before sending; False when another sender holds or settled it."""
        claimed = await self.pool.fetchval(
            "INSERT INTO review_notices (notice_key, workflow_id, tenant_id, step, channel,"
            " status, attempts) VALUES ($1, $2, $3, $4, $5, 'PENDING', 1)"
            " ON CONFLICT (notice_key) DO UPDATE SET status = 'PENDING',"
            " attempts = review_notices.attempts + 1"
            " WHERE review_notices.status = 'FAILED' RETURNING 1",
            notice.notice_key, notice.workflow_id, notice.tenant_id, notice.step, channel)
        return bool(claimed)

    async def settle(self, notice_key: str, status: str, error: str | None = None) -> None:
        await self.pool.execute(
            "UPDATE review_notices SET status = $2, last_error = $3,"
            " sent_at = CASE WHEN $2 = 'SENT' THEN now() END WHERE notice_key = $1",
            notice_key, status, error)
