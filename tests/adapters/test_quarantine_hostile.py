"""A quarantine row always inserts (issue 25): whatever PostgreSQL cannot hold in ``text`` or
``jsonb`` (NUL, lone surrogates, NaN, nesting past what a parser recurses into) is escaped
before the insert, in the quarantine, the outbox and the dead letters."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Any

import asyncpg
import pytest

from adapters.postgres.ops import OpsStore
from adapters.postgres.outbox import OutboxStore
from adapters.postgres.store import PostgresStore
from tests.conftest import fresh_key

NOW = datetime(2025, 1, 1, tzinfo=UTC)


def _deep(levels: int) -> Any:
    value: Any = "bottom"
    for _ in range(levels):
        value = {"n": value}
    return value


HOSTILE: dict[str, tuple[str, Any]] = {
    "nul": ("key\x00x", {"idempotency_key": "key\x00x", "k\x00": ["\x00"]}),
    "lone_high_surrogate": ("key\ud800", {"note": "a\ud800b"}),
    "lone_low_surrogate": ("key\udfff", {"note": "\udfff", "\ud83d": 1}),
    "non_finite": ("key-nan", {"amount": float("nan"), "limit": float("inf")}),
    "deep": ("key-deep", _deep(300)),
}


@pytest.mark.parametrize("shape", sorted(HOSTILE))
async def test_each_hostile_shape_gets_its_quarantine_row(pool: asyncpg.Pool, shape: str) -> None:
    text, payload = HOSTILE[shape]
    wf = f"quarantine/{uuid.uuid4().hex}"
    await PostgresStore(pool).quarantine(
        workflow_id=wf, reason_code="bad_envelope", detail=f"idempotency_key: {text!s}",
        redacted_payload=payload, received_at=NOW, tenant_id="acme", event_id=text)
    row = await pool.fetchrow("SELECT event_id, detail, redacted_payload FROM quarantine"
                              " WHERE workflow_id = $1", wf)
    assert row is not None
    # The operator still reads where the bad character was, escaped.
    if shape == "nul":
        assert row["event_id"] == "key\\u0000x"
        assert json.loads(row["redacted_payload"])["k\\u0000"] == ["\\u0000"]
    if shape == "lone_high_surrogate":
        assert row["event_id"] == "key\\ud800"
    if shape == "non_finite":
        assert json.loads(row["redacted_payload"])["amount"] == "nan"


async def test_a_second_quarantine_of_the_same_workflow_writes_nothing(pool: asyncpg.Pool) -> None:
    store, wf = PostgresStore(pool), f"quarantine/{uuid.uuid4().hex}"
    for _ in range(2):
        await store.quarantine(workflow_id=wf, reason_code="bad_envelope", detail="\x00",
                               redacted_payload={"a": "\x00"}, received_at=NOW)
    assert await pool.fetchval("SELECT count(*) FROM quarantine WHERE workflow_id = $1", wf) == 1


@pytest.mark.parametrize("shape", ["nul", "lone_high_surrogate", "lone_low_surrogate"])
async def test_the_outbox_records_a_body_postgres_cannot_hold(pool: asyncpg.Pool,
                                                              shape: str) -> None:
    text, _ = HOSTILE[shape]
    wf = f"quarantine/{uuid.uuid4().hex}"
    # As posted, unescaped: a body is not always the JSON it claims to be.
    raw = '{"tenant_id": "acme", "entity_id": "C-' + text + '"}'

    found = await OutboxStore(pool).record(
        workflow_id=wf, conflict_workflow_id=wf + "-c", tenant_id="acme", fingerprint="f",
        status="invalid", reason_code="malformed_json", raw=raw, received_at=NOW)
    assert found.kind == "new"
    assert await pool.fetchval("SELECT count(*) FROM outbox WHERE workflow_id = $1", wf) == 1


async def test_a_dead_letter_with_hostile_text_inserts(pool: asyncpg.Pool) -> None:
    wf = f"event/acme/{fresh_key()}"
    await OpsStore(pool).dead_letter(
        workflow_id=wf, error_class="dead_letter", error_code="schema_drift", state="RECEIVED",
        owner="ops", replay_plan="fix \x00", redacted_payload={"x": "\ud800\x00"},
        tenant_id="acme", event_id="e\x00", correlation_id="c\udfff")
    assert await pool.fetchval("SELECT event_id FROM dead_letters WHERE workflow_id = $1",
                               wf) == "e\\u0000"
