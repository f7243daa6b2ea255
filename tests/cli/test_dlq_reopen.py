"""A dead letter whose approved replay stops again is reopened (ADR 0059, amended).

The replayed reconciler run writes its dead letter again, for the same (workflow id, code):
that insert did nothing, so the dead letter stayed REPLAYED, out of "dead letters waiting",
and `ops status` counted its write as an open unknown write nobody had in hand. Now the second
write sets a REPLAYED dead letter back to OPEN (a fresh approval before another replay; its
approval and replay counts kept), with one `dlq_reopen` audit row by the reconciler, and the
write is moved aside to it again. An OPEN, APPROVED or CLOSED dead letter is left exactly as
it was, as is a REPLAYED one `ops close --unresolved-write` meets (its replay may still run).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from temporalio.testing import ActivityEnvironment

from activities.reconcile import ReconcileActivities
from adapters.postgres.dead_letters import DEAD_LETTER_SQL
from adapters.postgres.ops import OpsStore
from adapters.postgres.receipts import ReceiptStore
from contracts import (
    ActionRequest,
    EventRef,
    EventState,
    ReconcileRequest,
    StepRecord,
    Transition,
)
from contracts.actions import UNRECONCILED_CODE
from tests.cli.dlq_support import settings
from tests.cli.helpers import run_ops
from tests.cli.unknown_write_support import figures, letter, open_write
from tests.conftest import fresh_key
from tollgate.runtime.exits import Exit


@pytest.fixture
async def stores(pool: asyncpg.Pool) -> AsyncIterator[tuple[ReceiptStore, OpsStore]]:
    yield ReceiptStore(pool), OpsStore(pool)



async def replayed(ops: OpsStore, dl_id: int, number: int = 1) -> None:
    """``tollgate ops dlq approve`` then ``replay`` (the claim; the run is the test's)."""
    assert await ops.approve_dead_letter(dl_id, actor="op.kim", reason="not at the target")
    assert await ops.claim_replay(dl_id, actor="op.kim") == number


async def reopenings(pool: asyncpg.Pool, dl_id: int) -> list[dict[str, Any]]:
    rows = await pool.fetch("SELECT actor, detail FROM audit WHERE action = 'dlq_reopen'"
                            " AND target = $1 ORDER BY id", f"dead_letter/{dl_id}")
    return [{"actor": r["actor"], **json.loads(r["detail"])} for r in rows]


async def test_a_replay_that_stops_again_reopens_its_dead_letter(
        stores: tuple[ReceiptStore, OpsStore]) -> None:
    receipts, ops = stores
    wid, key = await open_write(receipts)
    dl_id = await letter(ops, wid, key)
    await replayed(ops, dl_id)
    before = await figures(receipts.pool)
    # The replayed run found nothing and may not resend: it writes its dead letter again.
    await letter(ops, wid, key)
    row = await ops.dead_letter_row(dl_id)
    assert row is not None
    assert (row["status"], row["approvals"], row["replays"]) == ("OPEN", 1, 1)
    assert await reopenings(ops.pool, dl_id) == [{
        "actor": "reconciler", "dead_letter": dl_id, "replays": 1,
        "reason": "its replay stopped again without settling the write; approve to replay "
                  "again"}]
    # The write is the dead letter's again: one fewer open unknown write, one more aside and
    # one more dead letter waiting (the figures of the same snapshot agree).
    after = await figures(receipts.pool)
    assert (before[0] - after[0], after[1] - before[1], after[2] - before[2]) == (1, 1, 1)
    # It waits for a fresh approval: no replay can be claimed on the old one.
    assert await ops.claim_replay(dl_id, actor="op.kim") is None
    # A second replay that stops again reopens it again, once more audited.
    await replayed(ops, dl_id, 2)
    await letter(ops, wid, key)
    row = await ops.dead_letter_row(dl_id)
    assert row is not None and (row["status"], row["replays"]) == ("OPEN", 2)
    assert [r["replays"] for r in await reopenings(ops.pool, dl_id)] == [1, 2]


@pytest.mark.parametrize("status", ["OPEN", "APPROVED", "CLOSED"])
async def test_a_dead_letter_not_replayed_is_left_as_it_is(
        status: str, stores: tuple[ReceiptStore, OpsStore]) -> None:
    receipts, ops = stores
    wid, key = await open_write(receipts)
    dl_id = await letter(ops, wid, key)
    if status == "APPROVED":
        await ops.approve_dead_letter(dl_id, actor="op.kim", reason="try again")
    if status == "CLOSED":  # a replay stopped, then a person closed it: still never reopened
        await replayed(ops, dl_id)
        await ops.close_dead_letter(dl_id, actor="op.kim", reason="settled by hand")
    before = await ops.dead_letter_row(dl_id)
    assert before is not None and before["status"] == status
    await letter(ops, wid, key)
    assert await ops.dead_letter_row(dl_id) == before
    assert await reopenings(ops.pool, dl_id) == []


async def test_the_reconcilers_dead_letter_write_reopens_it(
        stores: tuple[ReceiptStore, OpsStore]) -> None:
    """Through the activity the replayed ReconcileWrite run calls, with its replay's input."""
    receipts, ops = stores
    wid, key = await open_write(receipts)
    event_id = wid.rpartition("/")[2]
    ref = EventRef(workflow_id=wid, tenant_id="acme", event_id=event_id,
                   event_type="CARE_DUE", entity_id="C-1", correlation_id="c", schema_version=3)
    request = ReconcileRequest(ref=ref, action=ActionRequest(
        ref=ref, adapter="messaging", action="send_message", action_key=key, channel="sms",
        body="hi", policy_version="v", approved_by="r"))
    activities = ReconcileActivities(receipts, ops, {}, guard=None)  # type: ignore[arg-type]
    env = ActivityEnvironment()
    await env.run(activities.dead_letter_write, request)
    dl_id = int(await ops.pool.fetchval(
        "SELECT id FROM dead_letters WHERE workflow_id = $1 AND error_code = $2",
        wid, UNRECONCILED_CODE))
    await replayed(ops, dl_id)
    await env.run(activities.dead_letter_write, request.model_copy(update={"replay_of": dl_id}))
    row = await ops.dead_letter_row(dl_id)
    assert row is not None and row["status"] == "OPEN"
    assert [r["actor"] for r in await reopenings(ops.pool, dl_id)] == ["reconciler"]


async def test_a_dead_letter_beside_a_step_follows_the_same_rule(
        stores: tuple[ReceiptStore, OpsStore]) -> None:
    """The send step's statement (``DEAD_LETTER_AND_STEP_SQL``) reopens as the plain one does;
    its step is written beside as before. (Its codes are never replayed from the CLI: the row
    is set REPLAYED by hand to hold the statement to the rule.)"""
    _, ops = stores
    event_id = fresh_key("evt")
    ref = EventRef(workflow_id=f"event/acme/{event_id}", tenant_id="acme", event_id=event_id,
                   event_type="CARE_DUE", entity_id="C-1", correlation_id="c", schema_version=3)
    step = StepRecord(ref=ref, reason_code=None, policy_version="v", transitions=[Transition(
        seq=7, from_state=EventState.APPROVED, to_state=EventState.EXECUTING, actor="execute",
        reason="send")])

    async def write() -> None:
        await ops.dead_letter(
            workflow_id=ref.workflow_id, error_class="retryable",
            error_code="execute_action_timed_out", state="DEAD_LETTERED", owner="o",
            replay_plan="p", redacted_payload=None, tenant_id="acme", event_id=event_id,
            correlation_id="c", step=step)

    await write()
    dl_id = int(await ops.pool.fetchval("SELECT id FROM dead_letters WHERE workflow_id = $1",
                                        ref.workflow_id))
    await write()
    assert (await ops.dead_letter_row(dl_id) or {})["status"] == "OPEN"
    assert await reopenings(ops.pool, dl_id) == []
    await ops.pool.execute("UPDATE dead_letters SET status = 'REPLAYED', approvals = 1,"
                           " replays = 1 WHERE id = $1", dl_id)
    await write()
    assert (await ops.dead_letter_row(dl_id) or {})["status"] == "OPEN"
    assert [r["replays"] for r in await reopenings(ops.pool, dl_id)] == [1]
    assert await ops.pool.fetchval("SELECT count(*) FROM state_transitions"
                                   " WHERE workflow_id = $1 AND seq = 7", ref.workflow_id) == 1


async def test_unresolved_write_close_leaves_a_replayed_one(
        stores: tuple[ReceiptStore, OpsStore]) -> None:
    """``ops close --unresolved-write`` writes the same dead letter with no reopening actor:
    its replay may still be running, and a replay that stops reopens it itself."""
    receipts, ops = stores
    wid, key = await open_write(receipts)
    dl_id = await letter(ops, wid, key)
    await replayed(ops, dl_id)
    await ops.pool.execute(DEAD_LETTER_SQL, wid, "acme", None, "c", "unknown_write",
                           UNRECONCILED_CODE, "STOPPED", "o", "p", None, key, None, None)
    assert (await ops.dead_letter_row(dl_id) or {})["status"] == "REPLAYED"
    assert await reopenings(ops.pool, dl_id) == []


async def test_ops_dlq_show_says_it_was_reopened(
        fresh: tuple[str, ReceiptStore, OpsStore], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    url, receipts, ops = fresh
    wid, key = await open_write(receipts)
    dl_id = await letter(ops, wid, key)
    await replayed(ops, dl_id)
    await letter(ops, wid, key)
    s = settings(url, tmp_path)
    capsys.readouterr()
    assert await run_ops(["dlq", "show", str(dl_id)], s) == Exit.OK
    lines = capsys.readouterr().out.splitlines()
    assert "status           OPEN" in lines
    assert "reopened         after replay 1 stopped again: approve to replay again" in lines
    assert await run_ops(["status"], s) == Exit.ATTENTION
    said = capsys.readouterr().out
    assert "unknown writes open: 0 (1 moved aside to dead letters)" in said
