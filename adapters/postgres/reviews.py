"""Review decisions, the review SLA and the gate's counts in PostgreSQL.

A mixin of ``PostgresStore`` (same pool, same class for callers); kept apart because reviews are
a concept of their own: accepted decisions arrive with a step (``postgres_steps``), refused and
undelivered ones are written here, and ``review_record`` is what ``tollgate review show`` reads.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from adapters.postgres.pgtext import pg_text, pg_text_or_none
from adapters.postgres.steps import OPEN_REVIEW_SQL, step_args
from contracts import EventRef, ReviewDecision, StepRecord

# Both counts the policy gate needs, in one round trip. Each time is compared with the clock
# that wrote it: receipts are stamped by the database, review due times by the workflow ($5).
# A rolling 24 h window: the policy names no time zone, and a calendar day would let two
# messages through either side of midnight. With $7 the sends are counted as they stood then
# (the window ends at $7, a time of the same database clock): a retried approval's count.
GATE_COUNTS_SQL = """
SELECT
  (SELECT count(*) FROM events e JOIN receipts r ON r.workflow_id = e.workflow_id
   WHERE e.tenant_id = $1 AND e.entity_id = $2 AND r.tenant_id = $1 AND r.adapter = $3
     AND r.action = $4 AND r.status IN ('PENDING', 'UNKNOWN', 'SUCCEEDED')
     AND r.created_at > COALESCE($7::timestamptz, now()) - interval '24 hours'
     AND ($7::timestamptz IS NULL OR r.created_at < $7)) AS sends_today,
  (SELECT count(*) FROM events
   WHERE tenant_id = $1 AND state = 'AWAITING_REVIEW' AND review_due_at < $5
     AND workflow_id <> $6) AS overdue_reviews
"""

# The flags of many listed drafts in one round trip: the keys go in as two parallel arrays.
LISTED_FLAGS_SQL = """
SELECT d.workflow_id, d.version, jsonb_array_length(d.flags) AS flags
FROM unnest($1::text[], $2::int[]) AS k(workflow_id, version)
JOIN drafts d ON d.workflow_id = k.workflow_id AND d.version = k.version
"""


class ReviewRecords:
    """Review queries on ``self.pool`` (set by ``PostgresStore``)."""

    pool: asyncpg.Pool

    async def has_approval(self, workflow_id: str, draft_version: int) -> bool:
        return bool(await self.pool.fetchval(
            "SELECT 1 FROM review_decisions WHERE workflow_id = $1 AND draft_version = $2"
            " AND decision = 'approve' AND accepted LIMIT 1", workflow_id, draft_version,
        ))

    async def record_refused_decision(
        self, *, ref: EventRef, number: int, decision: ReviewDecision, refusal_code: str,
        policy_version: str | None,
    ) -> None:
        await self.pool.execute(
            "INSERT INTO review_decisions (workflow_id, decision_key, tenant_id, request_id,"
            " draft_version, decision, reviewer, role, reason, accepted, refusal_code,"
            " policy_version) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,false,$10,$11)"
            " ON CONFLICT (decision_key) DO NOTHING",
            ref.workflow_id, f"{ref.workflow_id}#r{number}", ref.tenant_id, decision.request_id,
            decision.draft_version, decision.decision, pg_text(decision.reviewer),
            decision.role, pg_text_or_none(decision.reason), refusal_code, policy_version,
        )

    async def open_review(self, step: StepRecord, review_due_at: datetime) -> bool:
        """``record_step`` for the transitions into AWAITING_REVIEW, also stamping the time the
        review's SLA passes (the backlog guard counts reviews past it)."""
        written = await self.pool.fetchval(OPEN_REVIEW_SQL, *step_args(step), review_due_at)
        return bool(written)

    async def count_gate_inputs(
        self, *, tenant_id: str, entity_id: str, adapter: str, action: str, as_of: datetime,
        workflow_id: str, sent_before: datetime | None = None,
    ) -> tuple[int, int]:
        """(sends of this action to this customer in the last 24 h, counting PENDING and
        UNKNOWN receipts; the tenant's other reviews open past their SLA at ``as_of``).
        ``sent_before``: the sends of the 24 h before that time (a database time) only."""
        row = await self.pool.fetchrow(
            GATE_COUNTS_SQL, tenant_id, entity_id, adapter, action, as_of, workflow_id,
            sent_before)
        assert row is not None
        return int(row["sends_today"]), int(row["overdue_reviews"])

    async def record_escalation(
        self, *, dedupe_key: str, target: str, detail: dict[str, Any]
    ) -> bool:
        """The escalation notice as an audit row (the notification channel for now); a retried
        notice writes nothing. Returns False when it was already written."""
        written = await self.pool.fetchval(
            "INSERT INTO audit (actor, action, target, detail, dedupe_key)"
            " VALUES ('workflow', 'review_escalated', $1, $2::jsonb, $3)"
            " ON CONFLICT (dedupe_key) DO NOTHING RETURNING 1",
            target, json.dumps(detail), dedupe_key,
        )
        return bool(written)

    async def record_undelivered_decision(
        self, *, workflow_id: str, decision: ReviewDecision, decision_key: str
    ) -> str | None:
        """A decision that never reached a workflow (it had already finished): recorded as
        refused, ``cross_tenant`` when the reviewer named another tenant (checked first, as
        ``policies.gate.authorize_decision`` does), else ``review_closed``; a decision naming
        no draft version (0) refers to the event's last one. Returns the code, or None when no
        such event exists."""
        return await self.pool.fetchval(
            "INSERT INTO review_decisions (workflow_id, decision_key, tenant_id, request_id,"
            " draft_version, decision, reviewer, role, reason, accepted, refusal_code,"
            " policy_version)"
            " SELECT e.workflow_id, $2, e.tenant_id, $3,"
            "  COALESCE(NULLIF($4::int, 0), e.artifact_version, 0), $5, $6, $7, $8, false,"
            "  CASE WHEN $9::text IS NOT NULL AND $9 <> e.tenant_id THEN 'cross_tenant'"
            "  ELSE 'review_closed' END, e.policy_version"
            " FROM events e WHERE e.workflow_id = $1"
            " ON CONFLICT (decision_key) DO NOTHING RETURNING refusal_code",
            workflow_id, decision_key, decision.request_id, decision.draft_version,
            decision.decision, decision.reviewer, decision.role, decision.reason,
            decision.tenant_id,
        )

    async def record_refused_by_validator(
        self, *, workflow_id: str, decision: ReviewDecision, refusal_code: str,
        decision_key: str,
    ) -> bool:
        """A decision the workflow's update validator refused (never in its history), recorded
        by the edge that sent it with the validator's code. False when no such event exists."""
        return bool(await self.pool.fetchval(
            "INSERT INTO review_decisions (workflow_id, decision_key, tenant_id, request_id,"
            " draft_version, decision, reviewer, role, reason, accepted, refusal_code,"
            " policy_version)"
            " SELECT e.workflow_id, $2, e.tenant_id, $3, $4, $5, $6, $7, $8, false, $9,"
            "  e.policy_version FROM events e WHERE e.workflow_id = $1"
            " ON CONFLICT (decision_key) DO NOTHING RETURNING 1",
            workflow_id, decision_key, pg_text(decision.request_id), decision.draft_version,
            decision.decision, pg_text(decision.reviewer), pg_text(decision.role),
            pg_text_or_none(decision.reason), refusal_code,
        ))

    async def listed_flags(
        self, drafts: Sequence[tuple[str, int]]
    ) -> dict[tuple[str, int], int]:
        """How many validator flags each (workflow id, draft version) has, for ``tollgate review
        list``; a draft not in ``drafts`` is absent from the answer."""
        if not drafts:
            return {}
        rows = await self.pool.fetch(
            LISTED_FLAGS_SQL, [w for w, _ in drafts], [v for _, v in drafts])
        return {(r["workflow_id"], r["version"]): int(r["flags"]) for r in rows}

    async def recorded_state(self, workflow_id: str) -> dict[str, Any] | None:
        """The ``state``, ``reason_code`` and ``tenant_id`` PostgreSQL holds for
        ``workflow_id``: its events row's, or, for a quarantined delivery (no events row),
        QUARANTINED, its reason and the tenant it named (None when it named none)."""
        row = await self.pool.fetchrow(
            "SELECT state, reason_code, tenant_id FROM events WHERE workflow_id = $1 UNION ALL"
            " SELECT 'QUARANTINED', reason_code, tenant_id FROM quarantine"
            " WHERE workflow_id = $1 LIMIT 1",
            workflow_id)
        return dict(row) if row is not None else None

    async def review_record(self, workflow_id: str) -> ReviewRecord | None:
        """What ``tollgate review show`` prints from PostgreSQL: the event, its newest draft and
        every decision, accepted and refused, oldest first."""
        async with self.pool.acquire() as conn:
            event = await conn.fetchrow(
                "SELECT tenant_id, event_type, state, reason_code, policy_version,"
                " artifact_version, review_due_at, received_at FROM events"
                " WHERE workflow_id = $1", workflow_id)
            if event is None:
                return None
            draft = await conn.fetchrow(
                "SELECT version, status, draft, provider, model, findings, flags FROM drafts"
                " WHERE workflow_id = $1 ORDER BY version DESC LIMIT 1", workflow_id)
            decisions = await conn.fetch(
                "SELECT at, decision, reviewer, role, reason, draft_version, accepted,"
                " refusal_code FROM review_decisions WHERE workflow_id = $1 ORDER BY id",
                workflow_id)
        return ReviewRecord(
            event=dict(event), draft=_draft_row(draft),
            decisions=[dict(d) for d in decisions],
        )


@dataclass(frozen=True)
class ReviewRecord:
    event: dict[str, Any]
    draft: dict[str, Any] | None
    decisions: list[dict[str, Any]]


def _draft_row(row: asyncpg.Record | None) -> dict[str, Any] | None:
    if row is None:
        return None
    data = dict(row)
    for column in ("draft", "findings", "flags"):
        if isinstance(data[column], str):
            data[column] = json.loads(data[column])
    return data
