"""`tollgate ops status --token` (ADR 0076): a token of one tenant sees that tenant's figures
only, and its exit 6 is judged on them, so another tenant's review past its SLA, dead letter,
moved-aside outbox row, failing step or closed switch neither shows nor pages; a global switch
('*') covers the tenant and does both. Without a token, as before. Before, `ops status` took no
`--token` at all. A module of its own: its database holds no other test's rows."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import asyncpg
import pytest

from tests.cli.helpers import ops_token, run_ops
from tests.cli.ops_status_support import add_event
from tests.cli.read_scope_support import settings
from tests.conftest import fresh_key
from tollgate.config.settings import Settings
from tollgate.runtime.exits import Exit


async def test_a_tokens_status_shows_and_judges_its_tenants_figures_only(
    database_url: str, tmp_path: Path, pool: asyncpg.Pool, capsys: pytest.CaptureFixture[str],
) -> None:
    s: Settings = settings(database_url, tmp_path)
    mine, theirs = fresh_key("mine"), fresh_key("theirs")
    await add_event(pool, mine, "SUCCEEDED", timedelta(minutes=5))
    await add_event(pool, theirs, "AWAITING_REVIEW", timedelta(hours=2),
                    review_due_in=timedelta(hours=-1))
    wid = f"event/{theirs}/{fresh_key()}"
    await pool.execute(
        "INSERT INTO dead_letters (workflow_id, tenant_id, event_id, error_class, error_code,"
        " state, owner, replay_plan) VALUES ($1, $2, 'e', 'dead_letter', 'crm_403',"
        " 'DEAD_LETTERED', 'integrations-oncall', 'read it')", wid, theirs)
    await pool.execute(
        "INSERT INTO outbox (workflow_id, tenant_id, raw, received_at, attempts, last_error,"
        " parked_at, parked_reason) VALUES ($1, $2, '{}', now(), 5, 'TimeoutError', now(),"
        " 'delivery_failed')", wid, theirs)
    await pool.execute(
        "INSERT INTO failing_steps (workflow_id, step, tenant_id, attempts, error_class,"
        " error_code) VALUES ($1, 'send', $2, 4, 'transient', 'crm_503')", wid, theirs)
    await pool.execute("INSERT INTO kill_switches (adapter, tenant_id, closed, reason,"
                       " changed_by) VALUES ('crm', $1, true, 'theirs', 'op.kim')", theirs)

    async def status(*token: str) -> tuple[int, dict]:
        capsys.readouterr()
        code = await run_ops(["status", "--json", *token], s)
        return code, json.loads(capsys.readouterr().out)

    reader = ops_token(s, "care_lead", tenant=mine, name="rae")
    code, snap = await status(*reader)
    assert snap["needs_a_human"] == [] and code == Exit.OK, snap["needs_a_human"]
    assert snap["tenant"] == mine
    assert [(r["state"], r["count"]) for r in snap["states"]] == [("SUCCEEDED", 1)]
    assert snap["reviews"] == [] and snap["dead_letters"] == []
    assert snap["closed_switches"] == [] and snap["failing_steps"]["count"] == 0
    assert snap["outbox"]["moved_aside"] == 0
    # The one sweep checks every tenant's receipts: its time is shown, its figures are not.
    await pool.execute(
        "INSERT INTO audit (actor, action, target, detail) VALUES ('sweep', 'receipt_sweep',"
        " 'receipts', '{\"checked\": 7, \"drift_missing_at_target\": 0, \"still_open\": 3}')")
    code, snap = await status(*reader)
    assert code == Exit.OK and snap["last_sweep"]["detail"] is None
    capsys.readouterr()
    assert await run_ops(["status", *reader], s) == Exit.OK
    shown = capsys.readouterr().out
    assert f", tenant {mine}" in shown and "(every tenant's receipts)" in shown, shown
    assert "checked 7" not in shown

    # Without a token, as before: every tenant's, and theirs pages.
    code, every = await status()
    assert code == Exit.ATTENTION and "tenant" not in every
    assert '"checked": 7' in str(every["last_sweep"]["detail"])  # JSON text, as before
    assert {r["tenant_id"] for r in every["reviews"]} == {theirs}
    assert [r["tenant_id"] for r in every["closed_switches"]] == [theirs]
    assert len(every["needs_a_human"]) >= 5, every["needs_a_human"]

    # A global switch covers the tenant: shown to its token, and it pages.
    await pool.execute("INSERT INTO kill_switches (adapter, tenant_id, closed, reason,"
                       " changed_by) VALUES ('crm', '*', true, 'everyone', 'op.kim')")
    code, snap = await status(*reader)
    assert code == Exit.ATTENTION
    assert [r["tenant_id"] for r in snap["closed_switches"]] == ["*"]
    assert snap["needs_a_human"] == ["1 kill switch(es) closed"]

    assert await run_ops(["status", "--token", "not-a-token"], s) == Exit.NO_IDENTITY
    assert "not-a-token" not in capsys.readouterr().err
