"""`tollgate ops outbox` (issue 25): an operator lists what the relay moved aside, retries or
drops a row, each action audited, and never sees the posted body. Who retries or drops is the
token's (no `--operator`): the roles and tenant the authority matrix allows, each refusal an
audit row."""

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

    assert await run_ops(["outbox", "retry", str(first), "--reason", "workflow fixed"], s,
                         role="on_call", name="kim") == Exit.OK
    assert await run_ops(["outbox", "drop", str(second), "--reason", "test traffic"], s,
                         role="change_owner", name="lee") == Exit.OK
    back = await pool.fetchrow("SELECT attempts, parked_at, dropped_at FROM outbox WHERE id = $1",
                               first)
    assert (back["attempts"], back["parked_at"], back["dropped_at"]) == (0, None, None)
    assert await pool.fetchval("SELECT dropped_at IS NOT NULL FROM outbox WHERE id = $1", second)
    audited = await pool.fetch("SELECT actor, action, target, detail FROM audit"
                               " WHERE action LIKE 'outbox_%' ORDER BY id")
    assert [(a["actor"], a["action"], a["target"]) for a in audited] == [
        ("kim", "outbox_retry", f"outbox/{first}"), ("lee", "outbox_drop", f"outbox/{second}")]
    assert json.loads(audited[0]["detail"])["reason"] == "workflow fixed"

    # A row back in line is not aside: retrying it again is refused; nothing is listed.
    assert await run_ops(["outbox", "retry", str(first), "--reason", "again"], s,
                         role="on_call", name="kim") == Exit.REFUSED
    assert await run_ops(["outbox", "show", "999999"], s) == Exit.NOT_FOUND
    capsys.readouterr()
    assert await run_ops(["outbox", "list"], s) == Exit.OK
    assert "no outbox rows moved aside" in capsys.readouterr().out


async def test_retry_and_drop_take_the_name_and_the_role_from_the_token(
        pool: asyncpg.Pool, database_url: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """No token: nobody to name (exit 8). A reviewer's token, an on-call dropping (a drop loses
    the event: the owners only), an owner of another tenant: refused, audited, row untouched."""
    s = http_settings(database_url, tmp_path)
    row = await park(pool, "ops-authz")
    retry, drop = (["outbox", verb, str(row), "--reason", "r"] for verb in ("retry", "drop"))

    assert await run_ops(retry, s) == Exit.NO_IDENTITY
    assert await run_ops(drop, s) == Exit.NO_IDENTITY
    capsys.readouterr()
    assert await run_ops(retry, s, role="care_lead", name="an.tran") == Exit.REFUSED
    assert "refused: role_not_allowed: outbox_retry needs one of" in capsys.readouterr().err
    assert await run_ops(drop, s, role="on_call", name="kim") == Exit.REFUSED
    assert await run_ops(drop, s, role="change_owner", tenant="globex",
                         name="lee") == Exit.REFUSED
    assert await run_ops(retry, s, role="incident_commander", tenant="globex",
                         name="mai") == Exit.REFUSED
    refused = await pool.fetch("SELECT actor, action, detail FROM audit WHERE target = $1"
                               " ORDER BY id", f"outbox/{row}")
    assert [(r["actor"], r["action"], json.loads(r["detail"])["refusal_code"])
            for r in refused] == [
        ("an.tran", "refused:outbox_retry", "role_not_allowed"),
        ("kim", "refused:outbox_drop", "role_not_allowed"),
        ("lee", "refused:outbox_drop", "cross_tenant"),
        ("mai", "refused:outbox_retry", "cross_tenant")]
    untouched = await pool.fetchrow("SELECT attempts, parked_at IS NOT NULL AS aside,"
                                    " dropped_at FROM outbox WHERE id = $1", row)
    assert tuple(untouched) == (5, True, None)

    assert await run_ops(drop, s, role="incident_commander", name="mai") == Exit.OK
    assert await pool.fetchval("SELECT actor FROM audit WHERE action = 'outbox_drop'"
                               " AND target = $1", f"outbox/{row}") == "mai"


@pytest.mark.parametrize(("flags", "said"), [
    ([], "no outbox rows moved aside"),
    (["--live"], "no outbox rows waiting for the relay"),
    (["--all"], "no unsent outbox rows (none waiting, none moved aside)"),
])
async def test_an_empty_list_says_which_rows_there_are_none_of(
        database_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch, flags: list[str], said: str) -> None:
    """`--live` on a quiet outbox said "no such outbox rows", naming none of them."""
    from adapters.postgres.outbox_admin import OutboxAdmin

    async def none(_self: OutboxAdmin, _which: str, _limit: int,
                   tenant: str | None = None) -> list[dict[str, object]]:
        return []  # the shared database may hold other tests' rows

    monkeypatch.setattr(OutboxAdmin, "rows", none)
    s = http_settings(database_url, tmp_path)
    assert await run_ops(["outbox", "list", *flags], s) == Exit.OK
    assert capsys.readouterr().out.strip() == said
