"""`tollgate ops outbox` (issue 25): an operator lists what the relay moved aside, retries or
drops a row, each action audited, and never sees the posted body."""

from __future__ import annotations

import json
from pathlib import Path

import asyncpg
import pytest

from tests.cli.helpers import run_ops
from tests.http.conftest import http_settings
from tollgate.runtime.exits import Exit

SECRET_TEXT = "Jane Roe, +1 555 0100"


async def park(pool: asyncpg.Pool, key: str) -> int:
    raw = json.dumps({"tenant_id": "acme", "entity_id": "C-7", "idempotency_key": key,
                      "payload": {"note": SECRET_TEXT}})
    return int(await pool.fetchval(
        "INSERT INTO outbox (workflow_id, tenant_id, entity_id, raw, received_at, attempts,"
        " last_error, parked_at, parked_reason) VALUES ($1, 'acme', 'C-7', $2, now(), 5,"
        " 'TimeoutError', now(), 'delivery_failed') RETURNING id", f"event/acme/{key}", raw))


async def test_list_show_retry_drop_audited_and_without_the_body(
        pool: asyncpg.Pool, database_url: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    s = http_settings(database_url, tmp_path)
    first, second = await park(pool, "ops-a"), await park(pool, "ops-b")

    assert await run_ops(["outbox", "list", "--json"], s) == Exit.OK
    listed = json.loads(capsys.readouterr().out)
    assert {r["id"] for r in listed} == {first, second}
    assert await run_ops(["outbox", "show", str(first)], s) == Exit.OK
    shown = capsys.readouterr().out
    assert "delivery_failed" in shown and "TimeoutError" in shown
    assert SECRET_TEXT not in shown and SECRET_TEXT not in json.dumps(listed)

    assert await run_ops(["outbox", "retry", str(first), "--operator", "kim",
                          "--reason", "workflow fixed"], s) == Exit.OK
    assert await run_ops(["outbox", "drop", str(second), "--operator", "kim",
                          "--reason", "test traffic"], s) == Exit.OK
    back = await pool.fetchrow("SELECT attempts, parked_at, dropped_at FROM outbox WHERE id = $1",
                               first)
    assert (back["attempts"], back["parked_at"], back["dropped_at"]) == (0, None, None)
    assert await pool.fetchval("SELECT dropped_at IS NOT NULL FROM outbox WHERE id = $1", second)
    audited = await pool.fetch("SELECT actor, action, target, detail FROM audit"
                               " WHERE action LIKE 'outbox_%' ORDER BY id")
    assert [(a["actor"], a["action"], a["target"]) for a in audited] == [
        ("kim", "outbox_retry", f"outbox/{first}"), ("kim", "outbox_drop", f"outbox/{second}")]
    assert json.loads(audited[0]["detail"])["reason"] == "workflow fixed"

    # A row back in line is not aside: retrying it again is refused; nothing is listed.
    assert await run_ops(["outbox", "retry", str(first), "--operator", "kim",
                          "--reason", "again"], s) == Exit.REFUSED
    assert await run_ops(["outbox", "show", "999999"], s) == Exit.NOT_FOUND
    capsys.readouterr()
    assert await run_ops(["outbox", "list"], s) == Exit.OK
    assert "no outbox rows moved aside" in capsys.readouterr().out
