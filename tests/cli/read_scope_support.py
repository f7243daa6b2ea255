"""What the read-scope tests share (ADR 0076): settings for one test's database and state
folder, and one row of each kind a read command shows, made for a tenant."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path

import asyncpg

from tests.conftest import TEST_KEYS_FILE, fresh_key
from tests.ports import free_port
from tollgate.config.settings import Settings
from tollgate.runtime.exits import Exit

#: ``ops ARGV`` run without a token: its code, output and last error line.
Run = Callable[..., Awaitable[tuple[int, str, str]]]


def settings(database_url: str, tmp_path: Path, temporal: str | None = None) -> Settings:
    return Settings.from_env({"DATABASE_URL": database_url, "TOLLGATE_STATE_DIR": str(tmp_path),
                              "TOLLGATE_KEYS_FILE": str(TEST_KEYS_FILE),
                              "TEMPORAL_ADDRESS": temporal or f"127.0.0.1:{free_port()}"})


async def rows_of(tenant: str, s: Settings, pool: asyncpg.Pool, run: Run) -> dict[str, str]:
    """One dead letter, outbox row (moved aside), event (STOPPED) and incident draft of
    ``tenant``, by what names each: {"dlq": id, "outbox": id, "event": workflow id, ...}."""
    key = fresh_key()
    wid = f"event/{tenant}/{key}"
    await pool.execute(
        "INSERT INTO events (workflow_id, run_id, tenant_id, idempotency_key, event_id,"
        " event_type, schema_version, entity_id, correlation_id, payload_fingerprint,"
        " occurred_at, received_at, state, reason_code) VALUES ($1, 'r', $2, $3, $4,"
        " 'CARE_DUE', 3, 'C-1', 'c', 'fp', now(), now(), 'STOPPED', 'daily_limit')",
        wid, tenant, key, f"shared-{key[-6:]}")
    dlq = await pool.fetchval(
        "INSERT INTO dead_letters (workflow_id, tenant_id, event_id, error_class, error_code,"
        " state, owner, replay_plan) VALUES ($1, $2, $3, 'dead_letter', 'crm_403',"
        " 'DEAD_LETTERED', 'integrations-oncall', 'read it') RETURNING id", wid, tenant, key)
    raw = json.dumps({"tenant_id": tenant, "idempotency_key": key, "payload": {}})
    outbox = await pool.fetchval(
        "INSERT INTO outbox (workflow_id, tenant_id, raw, received_at, attempts, last_error,"
        " parked_at, parked_reason) VALUES ($1, $2, $3, now(), 5, 'TimeoutError', now(),"
        " 'delivery_failed') RETURNING id", wid, tenant, raw)
    code, out, _ = await run(["incident", "--since", "1h", "--tenant", tenant, "--json"], s)
    assert code == Exit.OK
    return {"dlq": str(dlq), "outbox": str(outbox), "event": wid,
            "incident": str(json.loads(out)["id"])}
