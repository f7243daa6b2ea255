"""What an incident window left in PostgreSQL (ADR 0046), read in one read-only transaction so
the figures agree with each other, and the postmortem drafts kept with their packet's hash.

Where each piece of evidence lives: dead letters in ``dead_letters``; unknown writes as the
first ``UNKNOWN_WRITE`` row of ``state_transitions`` and the terminal row after it (its recovery
time); kill-switch changes and circuit closures as ``audit`` rows (``kill``, ``reopen``,
``reopen_canary``; the circuit's actor is ``circuit``); quarantines in ``quarantine`` (counted by
reason); refused drafts in ``drafts``; replays as ``dlq_replay`` / ``dlq_replay_result`` audit
rows. The policy version is the event's, the prompt version its latest draft's. Only ids,
codes, versions, states and times are selected: never a payload, a detail or a person's reason.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import asyncpg

_PROMPT = ("(SELECT d.prompt_version FROM drafts d WHERE d.workflow_id = e.workflow_id"
           " ORDER BY d.version DESC LIMIT 1)")
_TERMINAL = ["SUCCEEDED", "STOPPED", "REJECTED", "DEAD_LETTERED", "EXPIRED"]

_QUERIES = {
    "dead_letters": f"""
SELECT dl.id, dl.created_at AS at, dl.tenant_id, dl.workflow_id, dl.error_class, dl.error_code,
       dl.state, dl.status, dl.replays, e.policy_version, {_PROMPT} AS prompt_version
FROM dead_letters dl LEFT JOIN events e ON e.workflow_id = dl.workflow_id
WHERE dl.created_at >= $1 AND dl.created_at < $2 AND ($3::text IS NULL OR dl.tenant_id = $3)
ORDER BY dl.id""",
    "unknown_writes": f"""
SELECT e.id, u.opened AS at, e.tenant_id, e.workflow_id, e.policy_version,
       {_PROMPT} AS prompt_version, r.adapter, r.error_code, s.to_state AS outcome,
       extract(epoch FROM s.at - u.opened) AS seconds
FROM (SELECT workflow_id, min(at) AS opened FROM state_transitions
      WHERE to_state = 'UNKNOWN_WRITE' GROUP BY workflow_id) u
JOIN events e USING (workflow_id)
LEFT JOIN LATERAL (SELECT adapter, error_code FROM receipts WHERE workflow_id = u.workflow_id
                   ORDER BY created_at LIMIT 1) r ON true
LEFT JOIN LATERAL (SELECT t.to_state, t.at FROM state_transitions t
                   WHERE t.workflow_id = u.workflow_id AND t.at >= u.opened
                     AND t.to_state = ANY($4::text[]) ORDER BY t.seq LIMIT 1) s ON true
WHERE u.opened >= $1 AND u.opened < $2 AND ($3::text IS NULL OR e.tenant_id = $3)
ORDER BY e.id""",
    "switch_changes": """
SELECT id, at, actor, action, split_part(target, '/', 1) AS adapter,
       split_part(target, '/', 2) AS tenant_id, detail->>'rule' AS rule,
       (detail->>'count')::int AS count, (detail->>'limit')::int AS "limit",
       (detail->>'window_seconds')::int AS window_seconds, (detail->>'canary')::int AS canary,
       detail->>'policy_version' AS policy_version
FROM audit WHERE action IN ('kill', 'reopen', 'reopen_canary') AND at >= $1 AND at < $2
  AND ($3::text IS NULL OR split_part(target, '/', 2) IN ($3, '*'))
ORDER BY id""",
    "quarantines": """
SELECT reason_code, count(*) AS n, min(created_at) AS first_at, max(created_at) AS last_at
FROM quarantine WHERE created_at >= $1 AND created_at < $2
  AND ($3::text IS NULL OR tenant_id = $3)
GROUP BY reason_code ORDER BY reason_code""",
    "failed_validations": """
SELECT e.id AS event_row, d.version, d.created_at AS at, e.tenant_id, d.workflow_id, d.status,
       d.provider, d.model, d.prompt_version, e.policy_version,
       coalesce((SELECT split_part(f, ':', 1) FROM jsonb_array_elements_text(d.findings) f
                 LIMIT 1), d.status) AS code
FROM drafts d JOIN events e USING (workflow_id)
WHERE d.status IN ('failed_validation', 'unreadable') AND d.created_at >= $1
  AND d.created_at < $2 AND ($3::text IS NULL OR e.tenant_id = $3)
ORDER BY e.id, d.version""",
    "replays": """
SELECT a.id, a.at, a.action, dl.id AS dead_letter_id, dl.tenant_id,
       (a.detail->>'replay')::int AS replay, a.detail->>'result' AS result
FROM audit a LEFT JOIN dead_letters dl ON 'dead_letter/' || dl.id = a.target
WHERE a.action IN ('dlq_replay', 'dlq_replay_result') AND a.at >= $1 AND a.at < $2
  AND ($3::text IS NULL OR dl.tenant_id = $3)
ORDER BY a.id""",
}


class IncidentStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def evidence(self, since: datetime, until: datetime,
                       tenant: str | None) -> dict[str, list[dict[str, Any]]]:
        """Every row of the window, by kind (``policies.incident_packet.build_packet``)."""
        out: dict[str, list[dict[str, Any]]] = {}
        async with self.pool.acquire() as conn, conn.transaction(readonly=True,
                                                                 isolation="repeatable_read"):
            for name, sql in _QUERIES.items():
                args: list[Any] = [since, until, tenant]
                if "$4" in sql:
                    args.append(_TERMINAL)
                out[name] = [dict(r) for r in await conn.fetch(sql, *args)]
        return out

    async def save_draft(self, *, tenant: str, since: datetime, until: datetime,
                         packet_hash: str, packet: dict[str, Any], draft: dict[str, Any],
                         provider: str, model: str, prompt_version: str) -> tuple[int, bool]:
        """The draft's id, and whether it is new (the same packet, model and prompt: the row
        already kept)."""
        row = await self.pool.fetchrow(
            "INSERT INTO incident_drafts (tenant_id, since, until, packet_hash, packet, draft,"
            " provider, model, prompt_version) VALUES ($1,$2,$3,$4,$5::jsonb,$6::jsonb,$7,$8,$9)"
            " ON CONFLICT (packet_hash, provider, model, prompt_version) DO NOTHING RETURNING id",
            tenant, since, until, packet_hash, json.dumps(packet), json.dumps(draft), provider,
            model, prompt_version)
        if row is not None:
            return int(row["id"]), True
        kept = await self.pool.fetchval(
            "SELECT id FROM incident_drafts WHERE packet_hash = $1 AND provider = $2"
            " AND model = $3 AND prompt_version = $4", packet_hash, provider, model,
            prompt_version)
        return int(kept), False

    async def draft(self, draft_id: int) -> dict[str, Any] | None:
        row = await self.pool.fetchrow("SELECT * FROM incident_drafts WHERE id = $1", draft_id)
        if row is None:
            return None
        found = dict(row)
        found["packet"], found["draft"] = json.loads(row["packet"]), json.loads(row["draft"])
        return found

    async def mark_reviewed(self, draft_id: int, *, actor: str, packet_hash: str) -> bool:
        """DRAFT -> REVIEWED with its audit row, in one transaction; False when it was
        reviewed already (the first review stands)."""
        async with self.pool.acquire() as conn, conn.transaction():
            done = await conn.fetchval(
                "UPDATE incident_drafts SET status = 'REVIEWED', reviewed_by = $2,"
                " reviewed_at = now() WHERE id = $1 AND status = 'DRAFT' RETURNING id",
                draft_id, actor)
            if done is not None:
                await conn.execute(
                    "INSERT INTO audit (actor, action, target, detail)"
                    " VALUES ($1, 'incident_review', $2, $3::jsonb)",
                    actor, f"incident/{draft_id}", json.dumps({"packet_hash": packet_hash}))
        return done is not None
