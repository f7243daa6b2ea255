"""PostgreSQL store for events, transitions, quarantine, drafts and review decisions.

One asyncpg pool per process. Each step's own write and its state transition go in one
statement (one round trip); every insert is keyed so that a retried write changes nothing.
Receipts, kill switches and dead letters are in ``postgres_receipts.py`` on the same pool.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from importlib import resources
from typing import Any, Literal

import asyncpg

from contracts import EventEnvelope, EventRef, EventState, ReviewDecision, StepRecord
from contracts.errors import RetryableError

_MIGRATION_LOCK = 0x70_11_6A_7E  # any constant; serialises concurrent start-ups


async def _keep_session(_: asyncpg.Connection) -> None:
    """Released connections skip asyncpg's reset query (advisory unlock, CLOSE ALL, UNLISTEN,
    RESET ALL): the store leaves no session state behind (no LISTEN, no session advisory locks,
    no SET, no cursors), and asyncpg still rolls back a transaction left open. It was 14 of 34
    round trips per event (docs/performance.md)."""


async def create_pool(dsn: str, *, min_size: int = 1, max_size: int = 10) -> asyncpg.Pool:
    try:
        pool = await asyncpg.create_pool(dsn, min_size=min_size, max_size=max_size,
                                         reset=_keep_session)
    except (OSError, asyncpg.PostgresError) as exc:
        reason = f"cannot connect to PostgreSQL ({type(exc).__name__})"
        raise RetryableError("db_unreachable", reason) from exc
    await migrate(pool)
    return pool


async def migrate(pool: asyncpg.Pool) -> list[str]:
    """Apply the numbered SQL files in ``adapters/migrations`` not applied yet, in order."""
    files = sorted(
        (f for f in resources.files("adapters.migrations").iterdir() if f.name.endswith(".sql")),
        key=lambda f: f.name,
    )
    applied: list[str] = []
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock($1)", _MIGRATION_LOCK)
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        done = {r["name"] for r in await conn.fetch("SELECT name FROM schema_migrations")}
        for f in files:
            if f.name in done:
                continue
            await conn.execute(f.read_text())
            await conn.execute("INSERT INTO schema_migrations (name) VALUES ($1)", f.name)
            applied.append(f.name)
    return applied


@dataclass(frozen=True)
class Admission:
    status: Literal["new", "existing", "conflict", "superseded"]
    state: EventState
    outcome: dict[str, Any] | None = None


_TRANSITION_SQL = """
WITH t AS (
    SELECT * FROM unnest($2::int[], $3::text[], $4::text[], $5::text[], $6::text[])
        AS t(seq, from_state, to_state, actor, reason)
), last AS (
    SELECT seq, to_state FROM t ORDER BY seq DESC LIMIT 1
), upd AS (
    UPDATE events e SET state = last.to_state, last_seq = last.seq, updated_at = now(),
        reason_code = COALESCE($8, e.reason_code),
        policy_version = COALESCE($7, e.policy_version),
        artifact_version = COALESCE($9, e.artifact_version),
        receipt_key = COALESCE($10, e.receipt_key),
        outcome = COALESCE($11::jsonb, e.outcome)
    FROM last WHERE e.workflow_id = $1 AND e.last_seq < last.seq
    RETURNING e.workflow_id
), tr AS (
    INSERT INTO state_transitions (workflow_id, seq, from_state, to_state, actor, reason,
                                   policy_version)
    SELECT $1, seq, from_state, to_state, actor, reason, $7 FROM t
    ON CONFLICT (workflow_id, seq) DO NOTHING
    RETURNING seq
), dr AS (
    INSERT INTO drafts (workflow_id, version, status, draft, provider, model, prompt_version,
                        findings, raw_excerpt)
    SELECT $1, $9, d->>'status', d->'draft', d->>'provider', d->>'model', d->>'prompt_version',
           COALESCE(d->'findings', '[]'::jsonb), d->>'raw_excerpt'
    FROM (SELECT $12::jsonb AS d) s WHERE s.d IS NOT NULL
    ON CONFLICT (workflow_id, version) DO NOTHING
    RETURNING version
), rd AS (
    INSERT INTO review_decisions (workflow_id, decision_key, tenant_id, request_id,
                                  draft_version, decision, reviewer, role, reason, accepted,
                                  policy_version)
    SELECT $1, $1 || '#a' || (SELECT seq FROM last), $13, r->>'request_id',
           (r->>'draft_version')::int, r->>'decision', r->>'reviewer', r->>'role',
           r->>'reason', true, $7
    FROM (SELECT $14::jsonb AS r) s WHERE s.r IS NOT NULL
    ON CONFLICT (decision_key) DO NOTHING
    RETURNING 1
)
SELECT (SELECT count(*) FROM upd) + (SELECT count(*) FROM tr) AS written
"""

# Entering review also stamps the SLA due time on the events row, in the same statement (two
# UPDATEs of one row in one statement would be undefined, so it joins the one UPDATE).
_SET_OUTCOME = "outcome = COALESCE($11::jsonb, e.outcome)"
assert _TRANSITION_SQL.count(_SET_OUTCOME) == 1
_OPEN_REVIEW_SQL = _TRANSITION_SQL.replace(
    _SET_OUTCOME, f"{_SET_OUTCOME},\n        review_due_at = $15::timestamptz"
)

# Both counts the policy gate needs, in one round trip. Each time is compared with the clock
# that wrote it: receipts are stamped by the database, review due times by the workflow ($5).
# A rolling 24 h window: the policy names no time zone, and a calendar day would let two
# messages through either side of midnight.
_GATE_COUNTS_SQL = """
SELECT
  (SELECT count(*) FROM events e JOIN receipts r ON r.workflow_id = e.workflow_id
   WHERE e.tenant_id = $1 AND e.entity_id = $2 AND r.tenant_id = $1 AND r.adapter = $3
     AND r.action = $4 AND r.status IN ('PENDING', 'UNKNOWN', 'SUCCEEDED')
     AND r.created_at > now() - interval '24 hours') AS sends_today,
  (SELECT count(*) FROM events
   WHERE tenant_id = $1 AND state = 'AWAITING_REVIEW' AND review_due_at < $5
     AND workflow_id <> $6) AS overdue_reviews
"""


class PostgresStore:
    """Event state in PostgreSQL. Methods raise ``RetryableError`` when the database blips."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def admit_event(
        self,
        *,
        workflow_id: str,
        run_id: str,
        event: EventEnvelope,
        fingerprint: str,
        received_at: datetime,
    ) -> Admission:
        """The durable idempotency gate: insert the event as VALIDATED (seq 1-2), or say why not.

        Same run again (an activity retry after a lost reply) counts as new. Another run with the
        same key and payload is a duplicate; with another payload, a conflict. An older event for
        an entity that already has a newer one is admitted as SUPERSEDED.
        """
        async with self.pool.acquire() as conn, conn.transaction():
            newer = await conn.fetchval(
                "SELECT 1 FROM events WHERE tenant_id = $1 AND entity_id = $2 AND event_type = $3"
                " AND occurred_at > $4 AND idempotency_key <> $5 LIMIT 1",
                event.tenant_id, event.entity_id, event.event_type, event.occurred_at,
                event.idempotency_key,
            )
            state = EventState.SUPERSEDED if newer else EventState.VALIDATED
            row = await conn.fetchrow(
                "INSERT INTO events (workflow_id, run_id, tenant_id, idempotency_key, event_id,"
                " event_type, schema_version, entity_id, correlation_id, payload_fingerprint,"
                " occurred_at, received_at, state, last_seq, reason_code)"
                " VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,2,$14)"
                " ON CONFLICT (tenant_id, idempotency_key) DO NOTHING RETURNING id",
                workflow_id, run_id, event.tenant_id, event.idempotency_key, event.event_id,
                event.event_type, event.schema_version, event.entity_id, event.correlation_id,
                fingerprint, event.occurred_at, received_at, state.value,
                "newer_event_exists" if newer else None,
            )
            if row is not None:
                await conn.executemany(
                    "INSERT INTO state_transitions (workflow_id, seq, from_state, to_state, actor,"
                    " reason) VALUES ($1, $2, $3, $4, 'intake', $5)"
                    " ON CONFLICT (workflow_id, seq) DO NOTHING",
                    [
                        (workflow_id, 1, None, EventState.RECEIVED.value, "event received"),
                        (workflow_id, 2, EventState.RECEIVED.value, state.value,
                         "newer event for this entity already admitted" if newer
                         else "signature, tenant, schema and clock checked"),
                    ],
                )
                return Admission("superseded" if newer else "new", state)
            old = await conn.fetchrow(
                "SELECT run_id, payload_fingerprint, state, outcome FROM events"
                " WHERE tenant_id = $1 AND idempotency_key = $2",
                event.tenant_id, event.idempotency_key,
            )
        assert old is not None
        outcome = json.loads(old["outcome"]) if old["outcome"] else None
        if old["run_id"] == run_id:
            return Admission("new", EventState(old["state"]), outcome)
        if old["payload_fingerprint"] != fingerprint:
            return Admission("conflict", EventState(old["state"]), outcome)
        return Admission("existing", EventState(old["state"]), outcome)

    async def quarantine(
        self,
        *,
        workflow_id: str,
        reason_code: str,
        detail: str,
        redacted_payload: dict[str, Any] | None,
        received_at: datetime,
        tenant_id: str | None = None,
        event_id: str | None = None,
    ) -> None:
        await self.pool.execute(
            "INSERT INTO quarantine (workflow_id, tenant_id, event_id, reason_code, detail,"
            " redacted_payload, received_at) VALUES ($1,$2,$3,$4,$5,$6::jsonb,$7)"
            " ON CONFLICT (workflow_id) DO NOTHING",
            workflow_id, tenant_id, event_id, reason_code, detail,
            json.dumps(redacted_payload) if redacted_payload is not None else None, received_at,
        )

    async def record_step(self, step: StepRecord) -> bool:
        """One transition plus the step's own write (draft, decision, outcome) in one statement.
        Returns False when this step was already recorded (a retry)."""
        written = await self.pool.fetchval(_TRANSITION_SQL, *_step_args(step))
        return bool(written)

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
            decision.draft_version, decision.decision, decision.reviewer, decision.role,
            decision.reason, refusal_code, policy_version,
        )

    # --- review (issue 5) -----------------------------------------------------------------

    async def open_review(self, step: StepRecord, review_due_at: datetime) -> bool:
        """``record_step`` for the transitions into AWAITING_REVIEW, also stamping the time the
        review's SLA passes (the backlog guard counts reviews past it)."""
        written = await self.pool.fetchval(_OPEN_REVIEW_SQL, *_step_args(step), review_due_at)
        return bool(written)

    async def count_gate_inputs(
        self, *, tenant_id: str, entity_id: str, adapter: str, action: str, as_of: datetime,
        workflow_id: str,
    ) -> tuple[int, int]:
        """(sends of this action to this customer in the last 24 h, counting PENDING and
        UNKNOWN receipts; the tenant's other reviews open past their SLA at ``as_of``)."""
        row = await self.pool.fetchrow(
            _GATE_COUNTS_SQL, tenant_id, entity_id, adapter, action, as_of, workflow_id)
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
                "SELECT version, status, draft, provider, model, findings FROM drafts"
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
    for column in ("draft", "findings"):
        if isinstance(data[column], str):
            data[column] = json.loads(data[column])
    return data


def _step_args(step: StepRecord) -> tuple[Any, ...]:
    """``_TRANSITION_SQL``'s parameters $1-$14 for one step."""
    ref = step.ref
    ts = step.transitions
    return (
        ref.workflow_id,
        [t.seq for t in ts],
        [t.from_state.value if t.from_state else None for t in ts],
        [t.to_state.value for t in ts],
        [t.actor for t in ts],
        [t.reason for t in ts],
        step.policy_version,
        step.reason_code,
        step.draft.version if step.draft else None,
        step.outcome.receipt.action_key if step.outcome and step.outcome.receipt else None,
        step.outcome.model_dump_json() if step.outcome else None,
        step.draft.model_dump_json() if step.draft else None,
        ref.tenant_id,
        step.decision.model_dump_json() if step.decision else None,
    )
