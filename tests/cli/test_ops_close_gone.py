"""`tollgate ops close` of a run Temporal no longer knows (past the namespace's retention):
its row is closed STOPPED run_not_found, only once the row is older than the retention."""

from __future__ import annotations

import json
from pathlib import Path

import asyncpg
import pytest
from temporalio.testing import WorkflowEnvironment

from tests.cli.helpers import consenting, live_settings, said_by
from tests.cli.ops_close_support import closing
from tests.conftest import signed_event, start, wait_review
from tollgate.cli.ops import ops
from tollgate.dev.standins import StandIns
from tollgate.runtime.workers import draft_worker, main_worker


async def deleted(dev_server: WorkflowEnvironment, workflow_id: str) -> None:
    """Delete the run from Temporal, as the namespace's retention does, and wait until
    Temporal answers that it does not know it."""
    from temporalio.api.common.v1 import WorkflowExecution
    from temporalio.api.workflowservice.v1 import DeleteWorkflowExecutionRequest
    from temporalio.service import RPCError, RPCStatusCode

    from tests.eventually import eventually

    client = dev_server.client
    await client.workflow_service.delete_workflow_execution(DeleteWorkflowExecutionRequest(
        namespace=client.namespace, workflow_execution=WorkflowExecution(
            workflow_id=workflow_id)))

    async def gone() -> bool:
        try:
            await client.get_workflow_handle(workflow_id).describe()
        except RPCError as exc:
            return exc.status == RPCStatusCode.NOT_FOUND
        return False

    await eventually(gone, f"{workflow_id} deleted")


async def test_close_records_the_end_of_a_run_temporal_no_longer_knows(
        dev_server: WorkflowEnvironment, database_url: str, standins: StandIns,
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Past the namespace's retention Temporal forgets the run; its row stayed AWAITING_REVIEW
    and `ops close` answered exit 4 ("no such workflow"): a wedged row nothing could clear."""
    s, customer = live_settings(dev_server, database_url, standins, tmp_path)
    async with main_worker(dev_server.client, s), draft_worker(dev_server.client, s):
        forgotten = await start(dev_server.client, s.task_queue, signed_event(customer))
        sent = await start(dev_server.client, s.task_queue,
                           signed_event(consenting(standins)))
        await wait_review(forgotten)
        await wait_review(sent)
    for handle in (forgotten, sent):
        await deleted(dev_server, handle.id)
    wid = forgotten.id
    db = await asyncpg.connect(database_url)
    try:
        capsys.readouterr()
        # Changed moments ago: within the retention, so a run this Temporal never had (another
        # server or namespace runs it), not one it forgot. Not closed.
        code, text = await said_by(capsys, s, ops, "close", wid, *closing(s))
        assert code == 1 and "Temporal does not know it" in text, text
        assert "within the namespace's retention" in text
        assert await db.fetchval("SELECT state FROM events WHERE workflow_id = $1",
                                 wid) == "AWAITING_REVIEW"
        # `ops state` still answers from PostgreSQL (it said "no such event", exit 4).
        code, text = await said_by(capsys, s, ops, "state", wid)
        assert (code, text.strip()) == (0, "AWAITING_REVIEW (run not found, no outcome)"), text
        # Untouched for longer than the retention (the dev server's 1 day): Temporal forgot it.
        await db.execute("UPDATE events SET updated_at = now() - interval '2 days'"
                         " WHERE workflow_id = ANY($1::text[])", [wid, sent.id])
        code, text = await said_by(capsys, s, ops, "close", wid, *closing(s))
        assert (code, text.strip()) == (
            0, f"{wid}: closed AWAITING_REVIEW -> STOPPED (run_not_found), run not found; "
               "audited"), text
        row = await db.fetchrow("SELECT state, reason_code FROM events WHERE workflow_id = $1",
                                wid)
        assert row is not None and tuple(row) == ("STOPPED", "run_not_found")
        last = await db.fetchrow("SELECT from_state, to_state, actor, reason FROM"
                                 " state_transitions WHERE workflow_id = $1"
                                 " ORDER BY seq DESC LIMIT 1", wid)
        assert last is not None and tuple(last) == (
            "AWAITING_REVIEW", "STOPPED", "operator:lan.ops", "run_not_found")
        audits = await db.fetch("SELECT actor, detail FROM audit WHERE action = 'run_close'"
                                " AND target = $1", wid)
        assert [(a["actor"], json.loads(a["detail"])["run_ended"]) for a in audits] == [
            ("lan.ops", "not found")]
        code, text = await said_by(capsys, s, ops, "state", wid, "--json")
        assert json.loads(text[text.index("{"):]) == {
            "workflow_id": wid, "state": "STOPPED", "status": "NOT_FOUND",
            "reason_code": "run_not_found"}
        code, text = await said_by(capsys, s, ops, "close", wid, *closing(s))
        assert (code, text.strip()) == (
            0, f"{wid}: already ended STOPPED (run_not_found): nothing to do")
        assert await db.fetchval("SELECT count(*) FROM audit WHERE action = 'run_close'"
                                 " AND target = $1", wid) == 1
        code, text = await said_by(capsys, s, ops, "audit", "--verify")
        assert code == 0 and "intact" in text, text

        # A send was started (a receipt row): refused as for a run Temporal still knows.
        await db.execute(
            "INSERT INTO receipts (action_key, tenant_id, adapter, action, event_id, workflow_id,"
            " correlation_id, request_fingerprint, status)"
            " SELECT 'k-' || workflow_id, tenant_id, 'messaging', 'send', event_id, workflow_id,"
            " correlation_id, 'f', 'PENDING' FROM events WHERE workflow_id = $1", sent.id)
        code, text = await said_by(capsys, s, ops, "close", sent.id, *closing(s))
        assert code == 1 and "its send was started" in text, text
        assert await db.fetchval("SELECT state FROM events WHERE workflow_id = $1",
                                 sent.id) == "AWAITING_REVIEW"
        # An id neither Temporal nor PostgreSQL knows: exit 4, as before.
        code, text = await said_by(capsys, s, ops, "close", "event/acme/k-nosuch", *closing(s))
        assert code == 4 and "no such workflow" in text, text
    finally:
        await db.close()
