"""For the tests of `tollgate ops status`: an events row of a given state and age, and the
command run as a user would, so several test modules can share them without importing each
other."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg

from tests.cli.helpers import base_env, tollgate
from tests.conftest import fresh_key


async def add_event(conn: asyncpg.Connection, tenant: str, state: str, age: timedelta,
                    review_due_in: timedelta | None = None) -> None:
    """An events row in ``state``, last updated ``age`` ago (its review due in
    ``review_due_in``, if given)."""
    now = datetime.now(UTC)
    key = fresh_key()
    await conn.execute(
        "INSERT INTO events (workflow_id, run_id, tenant_id, idempotency_key, event_id,"
        " event_type, schema_version, entity_id, correlation_id, payload_fingerprint,"
        " occurred_at, received_at, state, updated_at, review_due_at)"
        " VALUES ($1, 'r', $2, $3, $3, 'CARE_DUE', 3, 'C-1', 'c', 'fp', $4, $4, $5, $6, $7)",
        f"event/{tenant}/{key}", tenant, key, now - age, state, now - age,
        now + review_due_in if review_due_in is not None else None)


def status(url: str, tmp_path: Path, *args: str, temporal: str | None = None
           ) -> tuple[int, str]:
    """``tollgate ops status ARGS`` on the database ``url``: its exit code and output."""
    extra = {"TEMPORAL_ADDRESS": temporal} if temporal else {}
    said = tollgate("ops", "status", *args, env=base_env(tmp_path, DATABASE_URL=url, **extra))
    assert said.clean(), said.text
    return said.code, said.out
