"""`tollgate ops close`: a review whose run was terminated by hand, past its SLA, kept
`ops status` at "needs a human" for ever (its PostgreSQL row stayed AWAITING_REVIEW). Closing
records the end as STOPPED (run_terminated) with one transition by the operator and one audit
row, the audit chain still verifies, `ops status` no longer counts it, and a second close is a
no-op. A running run and an unknown id are refused with their exit codes."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from temporalio.testing import WorkflowEnvironment

from tests.cli.helpers import consenting, live_settings, said_by
from tests.cli.ops_close_support import REASON, closing
from tests.conftest import fresh_key, signed_event, start, wait_review
from tollgate.cli.ops import ops
from tollgate.cli.review import review
from tollgate.cli.trace import trace
from tollgate.config.settings import Settings
from tollgate.dev.standins import StandIns
from tollgate.runtime.workers import draft_worker, main_worker


async def reviews(capsys: pytest.CaptureFixture[str], s: Settings) -> tuple[int, dict[str, Any]]:
    """`ops status --json`: its exit code, and reviews waiting and past SLA summed."""
    code, text = await said_by(capsys, s, ops, "status", "--json")
    snap = json.loads(text[text.index("{"):])
    return code, {"waiting": sum(r["waiting"] for r in snap["reviews"]),
                  "past_sla": sum(r["past_sla"] for r in snap["reviews"]),
                  "why": snap["needs_a_human"]}


async def test_close_records_the_end_of_a_terminated_review(
        dev_server: WorkflowEnvironment, database_url: str, standins: StandIns,
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    s, customer = live_settings(dev_server, database_url, standins, tmp_path)
    queue = s.task_queue
    async with main_worker(dev_server.client, s), draft_worker(dev_server.client, s):
        handle = await start(dev_server.client, queue, signed_event(customer))
        running = await start(dev_server.client, queue, signed_event(consenting(standins)))
        await wait_review(handle)
        await wait_review(running)
        await handle.terminate(reason="stopped by hand")
    wid = handle.id
    db = await asyncpg.connect(database_url)
    try:
        # The SLA passed (hours in the policy): what kept the screen at exit 6 for ever.
        await db.execute("UPDATE events SET review_due_at = now() - interval '1 hour'"
                         " WHERE workflow_id = $1", wid)
        capsys.readouterr()
        code, before = await reviews(capsys, s)
        assert (code, before["waiting"], before["past_sla"]) == (6, 2, 1), before
        assert any("past their SLA" in why for why in before["why"])

        code, text = await said_by(capsys, s, ops, "state", wid)
        assert (code, text.strip()) == (0, "AWAITING_REVIEW (run terminated, no outcome)")
        # Who closes is the token's: without one, nobody is named (exit 8); a reviewer's
        # token, or an operator's of another tenant, is refused and audited. Nothing closed.
        code, text = await said_by(capsys, s, ops, "close", wid, "--reason", REASON)
        assert code == 8 and "no token" in text, text
        code, text = await said_by(capsys, s, ops, "close", wid,
                                   *closing(s, "care_lead", name="an.tran"))
        assert code == 1 and "refused: role_not_allowed: run_close needs one of" in text, text
        code, text = await said_by(capsys, s, ops, "close", wid,
                                   *closing(s, "incident_commander", tenant="globex",
                                            name="ha.globex"))
        assert code == 1 and "refused: cross_tenant" in text, text
        # Not even whether another tenant's event exists.
        elsewhere = f"event/globex/{fresh_key()}"
        code, text = await said_by(capsys, s, ops, "close", elsewhere, *closing(s))
        assert code == 1 and "refused: cross_tenant" in text, text
        refused = await db.fetch("SELECT actor, action, target, detail FROM audit"
                                 " WHERE action LIKE 'refused:%' AND target = ANY($1::text[])"
                                 " ORDER BY id", [wid, elsewhere])
        assert [(r["actor"], r["action"], r["target"],
                 json.loads(r["detail"])["refusal_code"]) for r in refused] == [
            ("an.tran", "refused:run_close", wid, "role_not_allowed"),
            ("ha.globex", "refused:run_close", wid, "cross_tenant"),
            ("lan.ops", "refused:run_close", elsewhere, "cross_tenant")]
        assert await db.fetchval("SELECT state FROM events WHERE workflow_id = $1",
                                 wid) == "AWAITING_REVIEW"
        assert await db.fetchval("SELECT count(*) FROM audit WHERE action = 'run_close'"
                                 " AND target = $1", wid) == 0

        # The on-call's token of the event's tenant: closed, by the token's name.
        code, text = await said_by(capsys, s, ops, "close", wid, *closing(s))
        assert (code, text.strip()) == (
            0, f"{wid}: closed AWAITING_REVIEW -> STOPPED (run_terminated), run terminated; "
               "audited")
        # `ops state` says the recorded end, as `review show` does (the run's search attribute
        # keeps AWAITING_REVIEW for ever: a closed run cannot change it).
        code, text = await said_by(capsys, s, ops, "state", wid)
        assert (code, text.strip()) == (0, "STOPPED (run_terminated)"), text
        code, text = await said_by(capsys, s, ops, "state", wid, "--json")
        assert json.loads(text[text.index("{"):]) == {
            "workflow_id": wid, "state": "STOPPED", "status": "TERMINATED",
            "reason_code": "run_terminated"}
        row = await db.fetchrow("SELECT state, reason_code, outcome FROM events"
                                " WHERE workflow_id = $1", wid)
        assert row is not None and (row["state"], row["reason_code"]) == (
            "STOPPED", "run_terminated")
        assert json.loads(row["outcome"])["state"] == "STOPPED"
        last = await db.fetchrow("SELECT from_state, to_state, actor, reason FROM"
                                 " state_transitions WHERE workflow_id = $1"
                                 " ORDER BY seq DESC LIMIT 1", wid)
        assert last is not None and dict(last) == {
            "from_state": "AWAITING_REVIEW", "to_state": "STOPPED",
            "actor": "operator:lan.ops", "reason": "run_terminated"}
        audits = await db.fetch("SELECT actor, detail FROM audit WHERE action = 'run_close'"
                                " AND target = $1", wid)
        assert [a["actor"] for a in audits] == ["lan.ops"]
        detail = json.loads(audits[0]["detail"])
        assert (detail["reason"], detail["run_ended"], detail["from_state"]) == (
            REASON, "terminated", "AWAITING_REVIEW")

        code, after = await reviews(capsys, s)
        assert (after["waiting"], after["past_sla"]) == (1, 0), after  # the running one
        assert not any("past their SLA" in why for why in after["why"])
        assert code == (6 if after["why"] else 0)
        # The trace shows the end, and the audit chain holds the new transition.
        code, text = await said_by(capsys, s, trace, wid, "--verify")
        assert code == 0, text
        assert text.startswith(f"{wid}  STOPPED (run_terminated)")
        assert "chain intact" in text
        code, text = await said_by(capsys, s, ops, "audit", "--verify")
        assert code == 0 and "intact" in text, text
        code, text = await said_by(capsys, s, review, "show", wid)
        # With the reason, as trace's first line says it (the chain below starts after it).
        assert code == 0 and "state STOPPED (run_terminated)" in text and "--seen" not in text, \
            text
        assert "no outcome" not in text
        code, text = await said_by(capsys, s, review, "show", wid, "--json")
        shown = json.loads(text[text.index("{"):])
        assert (code, shown["state"], shown["run_ended"]) == (0, "STOPPED", None), text

        code, text = await said_by(capsys, s, ops, "close", wid, *closing(s))
        assert (code, text.strip()) == (
            0, f"{wid}: already ended STOPPED (run_terminated): nothing to do")
        assert await db.fetchval("SELECT count(*) FROM audit WHERE action = 'run_close'"
                                 " AND target = $1", wid) == 1

        code, text = await said_by(capsys, s, ops, "close", running.id, *closing(s))
        assert code == 1 and "still running: it ends on its own, or terminate it first" in text
        code, text = await said_by(capsys, s, ops, "close", "event/acme/k-nosuch", *closing(s))
        assert code == 4 and "no such workflow" in text, text
        assert await db.fetchval("SELECT state FROM events WHERE workflow_id = $1",
                                 running.id) == "AWAITING_REVIEW"
    finally:
        await db.close()
        await running.terminate(reason="test over")


async def test_close_refuses_an_outcome_and_a_started_send_and_writes_one_end(
        dev_server: WorkflowEnvironment, database_url: str, standins: StandIns,
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from adapters.postgres.pool import create_pool
    from adapters.postgres.run_close import RunCloses

    s, customer = live_settings(dev_server, database_url, standins, tmp_path)
    queue, silent = s.task_queue, fresh_key("C")
    standins.crm.upsert("acme", silent, first_name="Vy", pet_name="Bo",
                        consent_messaging=False)
    async with main_worker(dev_server.client, s), draft_worker(dev_server.client, s):
        stopped = await start(dev_server.client, queue, signed_event(silent))
        assert (await stopped.result()).state == "STOPPED"  # no consent: an outcome
        sent, twice = (await start(dev_server.client, queue, signed_event(customer)),
                       await start(dev_server.client, queue,
                                   signed_event(consenting(standins))))
        await wait_review(sent)
        await wait_review(twice)
        await sent.terminate(reason="stopped by hand")
        await twice.terminate(reason="stopped by hand")
    capsys.readouterr()
    code, text = await said_by(capsys, s, ops, "close", stopped.id, *closing(s))
    assert code == 1 and "completed with an outcome: nothing to close" in text, text

    p = await create_pool(database_url)
    try:
        # A receipt row is written before the send's call: this event's send was started, and
        # STOPPED would say that nothing was sent.
        await p.execute(
            "INSERT INTO receipts (action_key, tenant_id, adapter, action, event_id, workflow_id,"
            " correlation_id, request_fingerprint, status)"
            " SELECT 'k-' || workflow_id, tenant_id, 'messaging', 'send', event_id, workflow_id,"
            " correlation_id, 'f', 'PENDING' FROM events WHERE workflow_id = $1", sent.id)
        code, text = await said_by(capsys, s, ops, "close", sent.id, *closing(s))
        assert code == 1 and "its send was started" in text and "PENDING" in text, text
        assert await p.fetchval("SELECT state FROM events WHERE workflow_id = $1",
                                sent.id) == "AWAITING_REVIEW"

        # Two operators at once: the row is locked, so one end is written and one audit row.
        closes = RunCloses(p)
        done = await asyncio.gather(*(closes.close(twice.id, ended="terminated", operator=who,
                                                   reason="by hand") for who in ("a", "b")))
        assert sorted(d.result for d in done) == ["closed", "ended"]
        assert await p.fetchval("SELECT count(*) FROM audit WHERE action = 'run_close'"
                                " AND target = $1", twice.id) == 1
        assert await p.fetchval("SELECT count(*) FROM state_transitions WHERE workflow_id = $1"
                                " AND to_state = 'STOPPED'", twice.id) == 1
        code, text = await said_by(capsys, s, ops, "audit", "--verify")
        assert code == 0 and "intact" in text, text
    finally:
        await p.close()
