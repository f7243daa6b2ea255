"""PostgreSQL store for events, transitions, quarantine, drafts and review decisions.

One asyncpg pool per process (``postgres_pool``). Each step's own write and its state transition
go in one statement (``postgres_steps``); every insert is keyed so that a retried write changes
nothing. Review queries come from ``postgres_reviews``; receipts, kill switches and dead
letters are in ``receipts.py`` / ``ops.py`` on the same pool.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import asyncpg

from adapters.ports.stores.events import Admission
from adapters.ports.stores.sending import SendReads
from adapters.postgres.execute import open_and_record, read_before_send
from adapters.postgres.outbox import COUNT_DUPLICATE_SQL
from adapters.postgres.pgtext import pg_json, pg_text, pg_text_or_none
from adapters.postgres.reviews import ReviewRecords
from adapters.postgres.steps import RECORDED_AT_SQL, TRANSITION_SQL, recorded_args, step_args
from contracts import ActionRequest, EventEnvelope, EventState, Receipt, StepRecord

__all__ = ["PostgresStore"]


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


#: The idempotency gate in one statement (one round trip, its own transaction): is a newer event
#: for this entity admitted; insert as VALIDATED or SUPERSEDED with its two transitions; else the
#: row that holds the key. A CTE's read sees the snapshot from before the insert, so the last
#: join finds the earlier row only when this insert did nothing; then another run with the same
#: payload is one more duplicate counted (docs/metrics.md) in the same statement.
ADMIT_SQL = """
WITH newer AS (
    SELECT $13::boolean AND EXISTS (SELECT 1 FROM events WHERE tenant_id = $3
                   AND entity_id = $8 AND event_type = $6 AND occurred_at > $11
                   AND idempotency_key <> $4) AS v
), ins AS (
    INSERT INTO events (workflow_id, run_id, tenant_id, idempotency_key, event_id, event_type,
                        schema_version, entity_id, correlation_id, payload_fingerprint,
                        occurred_at, received_at, state, last_seq, reason_code)
    SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12,
           CASE WHEN newer.v THEN 'SUPERSEDED' ELSE 'VALIDATED' END, 2,
           CASE WHEN newer.v THEN 'newer_event_exists' END
    FROM newer
    ON CONFLICT (tenant_id, idempotency_key) DO NOTHING
    RETURNING state
), tr AS (
    INSERT INTO state_transitions (workflow_id, seq, from_state, to_state, actor, reason)
    SELECT $1, t.seq, t.from_state, t.to_state, 'intake', t.reason
    FROM ins, newer, LATERAL (VALUES
        (1, NULL, 'RECEIVED', 'event received'),
        (2, 'RECEIVED', ins.state,
         CASE WHEN newer.v THEN 'newer event for this entity already admitted'
              ELSE 'signature, tenant, schema and clock checked' END)
    ) AS t(seq, from_state, to_state, reason)
    ON CONFLICT (workflow_id, seq) DO NOTHING
), counted AS (
    INSERT INTO intake_duplicates (tenant_id, channel, stage, n)
    SELECT $3, 'gate', CASE WHEN old.outcome IS NULL THEN 'in_flight' ELSE 'after_close' END, 1
    FROM events old
    WHERE NOT EXISTS (SELECT 1 FROM ins) AND old.tenant_id = $3 AND old.idempotency_key = $4
      AND old.run_id <> $2 AND old.payload_fingerprint = $10
    ON CONFLICT (tenant_id, channel, stage) DO UPDATE SET n = intake_duplicates.n + 1
)
SELECT ins.state AS admitted, newer.v AS newer, old.run_id, old.payload_fingerprint,
       old.state, old.outcome
FROM newer
LEFT JOIN ins ON true
LEFT JOIN events old ON ins.state IS NULL AND old.tenant_id = $3 AND old.idempotency_key = $4
"""


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
        supersede: bool = True,
    ) -> Admission:
        """The durable idempotency gate: insert the event as VALIDATED (seq 1-2), or say why not.

        Same run again (an activity retry after a lost reply) counts as new. Another run with the
        same key and payload is a duplicate; with another payload, a conflict. An older event for
        an entity that already has a newer one is admitted as SUPERSEDED, unless ``supersede``
        is False (the policy's rule says its events never replace one another: an order's
        confirmation).
        """
        args = (workflow_id, run_id, event.tenant_id, event.idempotency_key, event.event_id,
                event.event_type, event.schema_version, event.entity_id, event.correlation_id,
                fingerprint, event.occurred_at, received_at, supersede)
        row = await self.pool.fetchrow(ADMIT_SQL, *args)
        assert row is not None  # FROM newer: always one row
        if row["admitted"] is not None:
            return Admission("superseded" if row["newer"] else "new",
                             EventState(row["admitted"]))
        old: Any = row if row["state"] is not None else None
        if old is None:
            # Another delivery of this key committed after this statement's snapshot was taken:
            # the insert saw its row (ON CONFLICT) but the statement's read could not.
            old = await self.pool.fetchrow(_EXISTING_SQL, event.tenant_id,
                                           event.idempotency_key, run_id, fingerprint)
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
            pg_text(workflow_id), pg_text_or_none(tenant_id), pg_text_or_none(event_id),
            reason_code, pg_text(detail), pg_json(redacted_payload), received_at,
        )

    async def record_step(self, step: StepRecord) -> bool:
        """One transition plus the step's own write (draft, decision, outcome) in one statement.
        Returns False when this step was already recorded (a retry)."""
        written = await self.pool.fetchval(TRANSITION_SQL, *step_args(step))
        return bool(written)

    async def recorded_at(self, step: StepRecord) -> datetime | None:
        """When this very step was recorded (its transitions under their numbers with this
        content, its decision accepted), or None: nothing, or another step, holds them."""
        at: datetime | None = await self.pool.fetchval(RECORDED_AT_SQL, *recorded_args(step))
        return at

    # The send step's one read and its receipt-and-step write (``adapters.postgres.execute``)
    # as methods, so that the activity holds a port (``SendStore``) and never a pool.

    async def read_before_send(self, *, tenant_id: str, adapter: str, workflow_id: str,
                               draft_version: int, action_key: str) -> SendReads:
        return await read_before_send(self.pool, tenant_id=tenant_id, adapter=adapter,
                                      workflow_id=workflow_id, draft_version=draft_version,
                                      action_key=action_key)

    async def open_and_record(self, request: ActionRequest, fingerprint: str, *,
                              mode: str | None, step: StepRecord,
                              would_send: str | None = None) -> Receipt | None:
        return await open_and_record(self.pool, request, fingerprint, mode=mode, step=step,
                                     would_send=would_send)
