"""PostgreSQL store for events, transitions, quarantine, drafts and review decisions.

One asyncpg pool per process (``postgres_pool``). Each step's own write and its state transition
go in one statement (``postgres_steps``); every insert is keyed so that a retried write changes
nothing. Review queries come from ``postgres_reviews``; receipts, kill switches and dead
letters are in ``postgres_receipts.py`` / ``postgres_ops.py`` on the same pool.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

import asyncpg

from adapters.postgres_outbox import COUNT_DUPLICATE_SQL
from adapters.postgres_pool import create_pool, migrate
from adapters.postgres_reviews import ReviewRecord, ReviewRecords
from adapters.postgres_steps import TRANSITION_SQL, step_args
from contracts import EventEnvelope, EventState, StepRecord

# Callers that built on this module before the split keep importing these from here.
__all__ = ["Admission", "PostgresStore", "ReviewRecord", "create_pool", "migrate"]


# The key's row, and (same statement) one more duplicate counted when this is another run with
# the same payload: the worker's gate answers "duplicate" from exactly this read. A retry of
# that run's activity after a lost reply counts it again (docs/metrics.md).
_EXISTING_SQL = """
WITH old AS (
    SELECT run_id, payload_fingerprint, state, outcome FROM events
    WHERE tenant_id = $1 AND idempotency_key = $2
), counted AS (
    INSERT INTO intake_duplicates (tenant_id, channel, stage, n)
    SELECT $1, 'gate', CASE WHEN outcome IS NULL THEN 'in_flight' ELSE 'after_close' END, 1
    FROM old WHERE run_id <> $3 AND payload_fingerprint = $4
    ON CONFLICT (tenant_id, channel, stage) DO UPDATE SET n = intake_duplicates.n + 1
)
SELECT * FROM old
"""


@dataclass(frozen=True)
class Admission:
    status: Literal["new", "existing", "conflict", "superseded"]
    state: EventState
    outcome: dict[str, Any] | None = None


class PostgresStore(ReviewRecords):
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
            old = await conn.fetchrow(_EXISTING_SQL, event.tenant_id, event.idempotency_key,
                                      run_id, fingerprint)
        assert old is not None
        outcome = json.loads(old["outcome"]) if old["outcome"] else None
        if old["run_id"] == run_id:
            return Admission("new", EventState(old["state"]), outcome)
        if old["payload_fingerprint"] != fingerprint:
            return Admission("conflict", EventState(old["state"]), outcome)
        return Admission("existing", EventState(old["state"]), outcome)

    async def count_duplicate(self, *, tenant_id: str, channel: str, stage: str) -> None:
        """One more duplicate answered (``tollgate_duplicates_prevented_total``)."""
        await self.pool.execute(COUNT_DUPLICATE_SQL, tenant_id, channel, stage)

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
        written = await self.pool.fetchval(TRANSITION_SQL, *step_args(step))
        return bool(written)
