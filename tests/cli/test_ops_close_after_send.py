"""`tollgate ops close` of a run terminated by hand after its send started: the event has a
receipt, and `ops close` refused it whatever the receipt said, so its row stayed EXECUTING and
`ops status` counted it for ever. Now the receipt decides: open (the write is unknown) is
refused, naming `tollgate ops sweep`; once settled, the event ends as the run ends it after that
receipt (SUCCEEDED, REJECTED, STOPPED for a shadow send), `run_terminated_after_send`, one
transition, one audit row, and nothing is ever sent again."""

from __future__ import annotations

import json
from pathlib import Path

import asyncpg
import pytest
from temporalio.testing import WorkflowEnvironment

from contracts import EventRef, EventState, StepRecord, Transition
from tests.cli.close_after_send_support import REASON, approve, end_of, send_key
from tests.cli.helpers import consenting, live_settings, said_by
from tests.cli.ops_close_support import closing
from tests.conftest import fresh_key, signed_event, start, wait_review
from tests.eventually import eventually
from tollgate.cli.ops import ops
from tollgate.dev.standins import StandIns
from tollgate.runtime.workers import draft_worker, main_worker


async def test_close_after_send_waits_for_the_receipt_then_ends_as_it_says(
        dev_server: WorkflowEnvironment, database_url: str, standins: StandIns,
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    s, _ = live_settings(dev_server, database_url, standins, tmp_path)
    keys = [fresh_key(), fresh_key()]  # one the target stores, one it will have refused
    async with main_worker(dev_server.client, s), draft_worker(dev_server.client, s):
        runs = [await start(dev_server.client, s.task_queue,
                            signed_event(consenting(standins), key=k)) for k in keys]
        for key, run in zip(keys, runs, strict=True):
            # The target stores the message, then holds the answer: the run is terminated
            # by hand while its send waits, its receipt still open.
            standins.messaging.inject("hang_after_write", key=send_key(key), ms=20_000)
            await approve(run)
            await eventually(lambda k=key: standins.messaging.posts_for(send_key(k)) == 1,
                             "the send inside its POST")
            await run.terminate(reason="stopped by hand")
    sent, refused = (r.id for r in runs)
    db = await asyncpg.connect(database_url)
    try:
        capsys.readouterr()
        for wid in (sent, refused):
            status = await db.fetchval("SELECT status FROM receipts WHERE workflow_id = $1", wid)
            assert status in ("PENDING", "UNKNOWN")
            code, text = await said_by(capsys, s, ops, "close", wid, *closing(s, reason=REASON))
            assert code == 1, text
            assert f"the write is unknown (state EXECUTING, receipt {status})" in text, text
            assert "tollgate ops sweep" in text and len(text.strip().splitlines()) == 1, text
            assert (await end_of(db, wid))[0] == "EXECUTING"

        # The sweep looks stale open receipts up at the target, which holds the first.
        await db.execute("UPDATE receipts SET updated_at = now() - interval '20 minutes'"
                         " WHERE workflow_id = $1", sent)
        async with main_worker(dev_server.client, s):
            code, text = await said_by(capsys, s, ops, "sweep")
        # The other's receipt is too recent for it: the sweep says it left it alone, where
        # "0 still open" alone read as no write being unknown.
        assert code == 0 and "open receipt(s) changed within 15 min not looked up yet" in text, \
            text
        receipt = await db.fetchrow("SELECT status, external_id FROM receipts"
                                    " WHERE workflow_id = $1", sent)
        assert receipt is not None and receipt["status"] == "SUCCEEDED", dict(receipt or {})
        code, text = await said_by(capsys, s, ops, "close", sent, *closing(s, reason=REASON))
        assert (code, text.strip()) == (
            0, f"{sent}: closed EXECUTING -> SUCCEEDED (run_terminated_after_send), run "
               "terminated, receipt SUCCEEDED; audited"), text
        assert await end_of(db, sent) == (
            "SUCCEEDED", "run_terminated_after_send",
            ("EXECUTING", "SUCCEEDED", "operator:lan.ops", "run_terminated_after_send"), 1)
        outcome = json.loads(await db.fetchval("SELECT outcome FROM events"
                                               " WHERE workflow_id = $1", sent))
        assert (outcome["state"], outcome["receipt"]["external_id"]) == (
            "SUCCEEDED", receipt["external_id"])
        detail = json.loads(await db.fetchval(
            "SELECT detail FROM audit WHERE action = 'run_close' AND target = $1", sent))
        assert (detail["receipt_status"], detail["to_state"]) == ("SUCCEEDED", "SUCCEEDED")

        # The other settled as a target's business refusal (a 4xx) settles it: it ends
        # REJECTED, as the run does.
        await db.execute("UPDATE receipts SET status = 'REJECTED', error_class = 'rejected',"
                         " error_code = 'rule_violation' WHERE workflow_id = $1", refused)
        code, text = await said_by(capsys, s, ops, "close", refused, *closing(s, reason=REASON))
        assert (code, text.strip()) == (
            0, f"{refused}: closed EXECUTING -> REJECTED (run_terminated_after_send), run "
               "terminated, receipt REJECTED; audited"), text
        assert (await end_of(db, refused))[:2] == ("REJECTED", "run_terminated_after_send")

        for wid, state in ((sent, "SUCCEEDED"), (refused, "REJECTED")):
            code, text = await said_by(capsys, s, ops, "close", wid, *closing(s, reason=REASON))
            assert (code, text.strip()) == (
                0, f"{wid}: already ended {state} (run_terminated_after_send): nothing to do")
            assert (await end_of(db, wid))[3] == 1
        code, text = await said_by(capsys, s, ops, "audit", "--verify")
        assert code == 0 and "intact" in text, text
        # Nothing was sent again: one POST each.
        assert [standins.messaging.posts_for(send_key(k)) for k in keys] == [1, 1]
    finally:
        await db.close()


async def test_close_after_a_shadow_send_stops_and_a_send_no_state_allows_is_refused(
        dev_server: WorkflowEnvironment, database_url: str, standins: StandIns,
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A shadow send (WOULD_SEND: nothing went out) whose receipt an older worker opened with
    no EXECUTING step: terminated there, the row is APPROVED and ends STOPPED, as the run ends
    it. A settled receipt beside a row no send ends from (AWAITING_REVIEW) is refused, not
    guessed."""
    from adapters.postgres.pool import create_pool
    from adapters.postgres.store import PostgresStore

    s, _ = live_settings(dev_server, database_url, standins, tmp_path)
    async with main_worker(dev_server.client, s), draft_worker(dev_server.client, s):
        shadow, odd = [await start(dev_server.client, s.task_queue,
                                   signed_event(consenting(standins))) for _ in range(2)]
        for run in (shadow, odd):
            await wait_review(run)
            await run.terminate(reason="stopped by hand")
    p = await create_pool(database_url)
    try:
        row = await p.fetchrow("SELECT * FROM events WHERE workflow_id = $1", shadow.id)
        ref = EventRef(**{f: row[f] for f in EventRef.model_fields})
        await PostgresStore(p).record_step(StepRecord(
            ref=ref, policy_version=row["policy_version"], transitions=[Transition(
                seq=row["last_seq"] + 1, from_state=EventState.AWAITING_REVIEW,
                to_state=EventState.APPROVED, actor="reviewer:an.tran", reason="approve")]))
        for run, status in ((shadow, "WOULD_SEND"), (odd, "SUCCEEDED")):
            await p.execute(
                "INSERT INTO receipts (action_key, tenant_id, adapter, action, event_id,"
                " workflow_id, correlation_id, request_fingerprint, status, rollout_mode)"
                " SELECT 'k-' || workflow_id, tenant_id, 'messaging', 'send_message', event_id,"
                " workflow_id, correlation_id, 'f', $2, 'shadow'"
                " FROM events WHERE workflow_id = $1", run.id, status)
        capsys.readouterr()
        code, text = await said_by(capsys, s, ops, "close", shadow.id, *closing(s, reason=REASON))
        assert (code, text.strip()) == (
            0, f"{shadow.id}: closed APPROVED -> STOPPED (run_terminated_after_send), run "
               "terminated, receipt WOULD_SEND; audited"), text
        assert await p.fetchval("SELECT state FROM events WHERE workflow_id = $1",
                                shadow.id) == "STOPPED"
        code, text = await said_by(capsys, s, ops, "close", odd.id, *closing(s, reason=REASON))
        assert code == 1, text
        assert "its receipt is SUCCEEDED yet its record is AWAITING_REVIEW" in text, text
        assert await p.fetchval("SELECT state FROM events WHERE workflow_id = $1",
                                odd.id) == "AWAITING_REVIEW"
        code, text = await said_by(capsys, s, ops, "audit", "--verify")
        assert code == 0 and "intact" in text, text
    finally:
        await p.close()
