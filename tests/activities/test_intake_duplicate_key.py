"""The workflow's intake is the authority on what an event is: a key held twice in one object
is quarantined there too, whichever way the text arrived (every edge refuses it first)."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime

import asyncpg
from temporalio.testing import ActivityEnvironment

from activities.intake import IntakeActivities
from adapters.postgres.ops import OpsStore
from adapters.postgres.store import PostgresStore
from contracts import IntakeRequest
from policies.matrix import load_matrix
from policies.signing import sign
from tollgate.dev.demo import care_due

SECRETS = {"acme": "s3cret"}


async def test_a_signed_event_holding_a_key_twice_is_quarantined_duplicate_key(
        pool: asyncpg.Pool) -> None:
    key = f"k-{uuid.uuid4().hex[:8]}"
    ev = care_due("acme", "C-1", key, now=datetime.now(UTC))
    # Signed over what json.loads reads (the last value); a reader keeping the first value
    # would see another customer.
    signed = {**ev, "signature": sign(ev, SECRETS["acme"])}
    raw = json.dumps({k: v for k, v in signed.items() if k != "entity_id"})[:-1] + (
        ', "entity_id": "C-2", "entity_id": "C-1"}')
    intake = IntakeActivities(PostgresStore(pool), OpsStore(pool), SECRETS, load_matrix())
    workflow_id = f"event/acme/{key}"
    env = ActivityEnvironment()
    env.info = env.info.__class__(**{**env.info.__dict__, "workflow_id": workflow_id,
                                     "workflow_run_id": "run-1"})
    result = await env.run(intake.validate_event,
                           IntakeRequest(raw=raw, received_at=datetime.now(UTC)))
    assert (result.status, result.reason_code) == ("quarantined", "duplicate_key")
    assert result.message is not None and result.message.startswith("$.entity_id: ")
    reason = await pool.fetchval("SELECT reason_code FROM quarantine WHERE workflow_id = $1",
                                 workflow_id)
    assert reason == "duplicate_key"
