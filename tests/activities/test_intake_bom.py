"""The workflow's intake names a byte order mark before an event too (an edge refuses it first,
but the intake is the authority on whatever reaches it)."""

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
SAID = "the event starts with a byte order mark (U+FEFF); send UTF-8 without it"


async def test_an_event_after_a_byte_order_mark_is_quarantined_naming_it(
        pool: asyncpg.Pool) -> None:
    ev = care_due("acme", "C-1", f"k-{uuid.uuid4().hex[:8]}", now=datetime.now(UTC))
    raw = "\ufeff" + json.dumps({**ev, "signature": sign(ev, SECRETS["acme"])})
    intake = IntakeActivities(PostgresStore(pool), OpsStore(pool), SECRETS, load_matrix())
    workflow_id = f"quarantine/{uuid.uuid4().hex}"
    env = ActivityEnvironment()
    env.info = env.info.__class__(**{**env.info.__dict__, "workflow_id": workflow_id,
                                     "workflow_run_id": "run-1"})
    result = await env.run(intake.validate_event,
                           IntakeRequest(raw=raw, received_at=datetime.now(UTC)))
    # Was "the event is not valid JSON".
    assert (result.status, result.reason_code, result.message) == (
        "quarantined", "malformed_json", SAID)
    detail = await pool.fetchval("SELECT detail FROM quarantine WHERE workflow_id = $1",
                                 workflow_id)
    assert detail == SAID
