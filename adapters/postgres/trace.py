"""What PostgreSQL knows about one event, for ``tollgate trace``: the envelope, every transition,
draft version, review decision, receipt and dead letter. Values a reviewer typed or a model wrote
(draft text, payloads) are never read here: the chain names things, it does not repeat them.
"""

from __future__ import annotations

import json
from typing import Any

import asyncpg

from adapters.postgres.run_signs import failing_of, hold_of

#: The envelope fields of a row's redacted copy: an event refused before admission has no
#: events row, and its copy keeps these as they were (``policies.redaction.SAFE_KEYS``).
_ENVELOPE_OF_COPY = ("redacted_payload->>'event_type' AS event_type,"
                     " redacted_payload->>'schema_version' AS schema_version,"
                     " redacted_payload->>'occurred_at' AS occurred_at")


def _rows(records: list[asyncpg.Record]) -> list[dict[str, Any]]:
    return [dict(r) for r in records]


class TraceStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def workflows_for(self, event: str, tenant: str | None = None) -> list[str]:
        """Workflow ids an operator's EVENT names: itself when it is one, else by event id
        (one per tenant that used that id), quarantined records and events dead-lettered
        before admission (a retired schema version) included; with ``tenant``, that tenant's
        only (a record naming no tenant is none of them)."""
        mine = " AND ($2::text IS NULL OR tenant_id = $2)"
        rows = await self.pool.fetch(
            f"SELECT workflow_id FROM events WHERE (workflow_id = $1 OR event_id = $1){mine}"
            " UNION SELECT workflow_id FROM quarantine"
            f" WHERE (workflow_id = $1 OR event_id = $1){mine}"
            " UNION SELECT workflow_id FROM dead_letters"
            f" WHERE (workflow_id = $1 OR event_id = $1){mine} ORDER BY 1", event, tenant)
        return [r["workflow_id"] for r in rows]

    async def event_chain(self, workflow_id: str) -> dict[str, Any] | None:
        """Every row of the event's chain, oldest first; None when PostgreSQL has no record."""
        async with self.pool.acquire() as conn:
            event = await conn.fetchrow(
                "SELECT workflow_id, run_id, tenant_id, event_id, event_type, schema_version,"
                " correlation_id, payload_fingerprint, occurred_at, received_at, state,"
                " reason_code, policy_version, artifact_version, receipt_key FROM events"
                " WHERE workflow_id = $1", workflow_id)
            # Of the redacted copy, only the envelope's identifiers (SAFE_KEYS keeps them).
            quarantine = await conn.fetchrow(
                "SELECT tenant_id, event_id, reason_code, received_at,"
                f" {_ENVELOPE_OF_COPY} FROM quarantine WHERE workflow_id = $1", workflow_id)
            dead = await conn.fetch(
                "SELECT id, error_class, error_code, state, owner, status, replays,"
                " replayed_workflow_id, created_at, tenant_id, event_id, correlation_id,"
                f" {_ENVELOPE_OF_COPY} FROM dead_letters WHERE workflow_id = $1 ORDER BY id",
                workflow_id)
            if event is None and quarantine is None and not dead:
                return None
            transitions = await conn.fetch(
                "SELECT seq, from_state, to_state, actor, reason, policy_version, at"
                " FROM state_transitions WHERE workflow_id = $1 ORDER BY seq", workflow_id)
            drafts = await conn.fetch(
                "SELECT version, status, provider, model, prompt_version, findings, created_at"
                " FROM drafts WHERE workflow_id = $1 ORDER BY version", workflow_id)
            decisions = await conn.fetch(
                "SELECT at, decision, reviewer, role, draft_version, accepted, refusal_code,"
                " policy_version FROM review_decisions WHERE workflow_id = $1 ORDER BY id",
                workflow_id)
            receipts = await conn.fetch(
                "SELECT action_key, adapter, action, status, external_id, error_class,"
                " error_code, attempts, created_at, updated_at FROM receipts"
                " WHERE workflow_id = $1 ORDER BY created_at", workflow_id)
            hold = await hold_of(conn, workflow_id)
            failing = await failing_of(conn, workflow_id)
        draft_rows = _rows(drafts)
        for d in draft_rows:
            if isinstance(d["findings"], str):
                d["findings"] = json.loads(d["findings"])
        return {
            "event": dict(event) if event else None,
            "quarantine": dict(quarantine) if quarantine else None,
            "transitions": _rows(transitions), "drafts": draft_rows,
            "decisions": _rows(decisions), "receipts": _rows(receipts),
            "dead_letters": _rows(dead), "hold": hold, "failing_steps": failing,
        }
