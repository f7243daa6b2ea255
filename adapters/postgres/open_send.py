"""What PostgreSQL holds of an event's started send, read for ``tollgate ops close
--unresolved-write`` before it asks the target: the event, its receipt and how long that receipt
has not changed, and the approval the send carried (the reviewer, the draft version and that
draft's text), from which the send can be built again for a replay."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import asyncpg

from adapters.postgres.receipts import RECEIPT_COLUMNS
from contracts import EventRef, Receipt

_SQL = f"""
SELECT e.workflow_id, e.tenant_id, e.event_id, e.event_type, e.entity_id, e.correlation_id,
       e.schema_version, e.state, to_jsonb(r) AS receipt, now() - r.updated_at AS open_for,
       d.reviewer, d.draft_version,
       (SELECT draft->>'message' FROM drafts
        WHERE workflow_id = e.workflow_id AND version = d.draft_version) AS body
FROM events e
LEFT JOIN LATERAL (SELECT {RECEIPT_COLUMNS} FROM receipts WHERE workflow_id = e.workflow_id
                   ORDER BY created_at DESC LIMIT 1) r ON true
LEFT JOIN LATERAL (SELECT reviewer, draft_version FROM review_decisions
                   WHERE workflow_id = e.workflow_id AND decision = 'approve' AND accepted
                   ORDER BY id DESC LIMIT 1) d ON true
WHERE e.workflow_id = $1
"""


@dataclass(frozen=True)
class OpenSend:
    ref: EventRef
    #: The events row's state.
    state: str
    receipt: Receipt
    #: How long the receipt has not changed (PostgreSQL's clock).
    open_for: timedelta
    #: The last accepted approval's reviewer and draft version, and that draft's text (None
    #: when PostgreSQL holds none of them).
    approved_by: str | None
    draft_version: int | None
    body: str | None


async def open_send(pool: asyncpg.Pool, workflow_id: str) -> OpenSend | None:
    """The event's send as stored; None when there is no event row or no receipt."""
    row = await pool.fetchrow(_SQL, workflow_id)
    if row is None or row["receipt"] is None:
        return None
    return OpenSend(
        ref=EventRef(**{f: row[f] for f in EventRef.model_fields}), state=row["state"],
        receipt=Receipt.model_validate_json(row["receipt"]), open_for=row["open_for"],
        approved_by=row["reviewer"], draft_version=row["draft_version"], body=row["body"])
