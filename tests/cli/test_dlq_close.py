"""`tollgate ops dlq close`: an operator takes a dead letter nobody will replay off the books
(ADR 0060). Before it, such a dead letter stayed OPEN for ever and `ops status` exited 6 for
ever after it. The close needs a change_owner's or incident_commander's token of the dead
letter's tenant (refusals audited, a tenant's token learns nothing of another's), records who,
when and why, and is final: approve and replay refuse it, even with an approval given before.
Its write stays unknown but is moved aside for good: not an open unknown write, never swept,
counted as closed by hand. A replay still running is not raced: the close waits for its end."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import asyncpg
import pytest
from temporalio.client import WorkflowExecutionStatus
from temporalio.testing import WorkflowEnvironment

from activities.sweep import SweepActivities
from adapters.postgres.metrics import MetricsStore
from adapters.postgres.ops import OpsStore
from adapters.postgres.receipts import ReceiptStore
from contracts import ReceiptStatus
from contracts.sweep import SweepRequest
from tests.cli.dlq_support import replayable, settings
from tests.cli.helpers import run_ops
from tests.cli.ops_status_support import status
from tests.cli.unknown_write_support import (
    EmptyTarget,
    figures,
    letter,
    lettered_database,
    open_write,
)
from tollgate.runtime.exits import Exit

WHY = ["--reason", "customer called by phone instead"]


async def audit_of(pool: asyncpg.Pool, dl_id: int) -> list[tuple[str, str, str]]:
    rows = await pool.fetch("SELECT actor, action, detail FROM audit WHERE target = $1"
                            " ORDER BY id", f"dead_letter/{dl_id}")
    return [(r["actor"], r["action"], json.loads(r["detail"]).get("refusal_code")
             or json.loads(r["detail"]).get("reason")) for r in rows]


async def test_a_close_needs_the_role_and_is_final(
    fresh: tuple[str, ReceiptStore, OpsStore], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url, receipts, ops = fresh
    s = settings(url, tmp_path)
    dl_id, _ = await replayable(receipts, ops)
    # Approved before the close: the approval must not outlive it.
    assert await ops.approve_dead_letter(dl_id, actor="mai", reason="try once more")
    close = ["dlq", "close", str(dl_id), *WHY]

    assert await run_ops(close, s) == Exit.NO_IDENTITY  # no token: nobody to name
    assert await run_ops(close, s, role="on_call", name="kim") == Exit.REFUSED
    assert "refused: role_not_allowed: dead_letter_close needs one of the roles change_owner, " \
        "incident_commander" in capsys.readouterr().err
    assert await run_ops(close, s, role="change_owner", tenant="globex",
                         name="lee") == Exit.REFUSED
    said = capsys.readouterr().err.splitlines()[-1]
    # One that does not exist is every tenant's (as one without a tenant): refused as another
    # tenant's is, in the same words (the line names the token's tenant, never the dead
    # letter's), so a token learns nothing of it, not even that it does not exist.
    missing = ["dlq", "close", "987654", *WHY]
    assert await run_ops(missing, s, role="change_owner", tenant="globex",
                         name="lee") == Exit.REFUSED
    assert capsys.readouterr().err.splitlines()[-1] == said == (
        "tollgate: refused: cross_tenant: the token may dead_letter_close for its own tenant "
        "('globex') only; that id is none of its own (another tenant's, or none at all)")
    row = await ops.dead_letter_row(dl_id)
    assert row is not None and (row["status"], row["closed_by"]) == ("APPROVED", None)

    assert await run_ops(close, s, role="incident_commander", name="mai") == Exit.OK
    assert capsys.readouterr().out.startswith(f"dead letter {dl_id} closed: it is never replayed")
    assert await audit_of(ops.pool, dl_id) == [
        ("mai", "dlq_approve", "try once more"),
        ("kim", "refused:dead_letter_close", "role_not_allowed"),
        ("lee", "refused:dead_letter_close", "cross_tenant"),
        ("mai", "dlq_close", "customer called by phone instead"),
    ]
    assert await audit_of(ops.pool, 987654) == [("lee", "refused:dead_letter_close",
                                                 "cross_tenant")]

    # Again: one line, exit 0, nothing written.
    assert await run_ops(close, s, role="change_owner", name="lee") == Exit.OK
    said = capsys.readouterr()
    assert said.out.startswith(f"dead letter {dl_id}: already closed by mai at ")
    assert said.out.rstrip().endswith(": nothing to do") and len(said.out.splitlines()) == 1
    assert len(await audit_of(ops.pool, dl_id)) == 4

    # Final: the approval given before is not used, no new one is taken (Temporal is nowhere:
    # a replay that got past the refusal would end in exit 3).
    assert await run_ops(["dlq", "replay", str(dl_id)], s, role="on_call") == Exit.REFUSED
    assert f"dead letter {dl_id} is closed: nothing is replayed" in capsys.readouterr().err
    assert await ops.claim_replay(dl_id, actor="kim") is None
    assert await run_ops(["dlq", "approve", str(dl_id), "--reason", "again"], s,
                         role="change_owner") == Exit.REFUSED
    assert f"dead letter {dl_id} is closed" in capsys.readouterr().err

    assert await run_ops(["dlq", "show", str(dl_id), "--json"], s) == Exit.OK
    shown = json.loads(capsys.readouterr().out)
    assert (shown["status"], shown["closed_by"], shown["closed_reason"], shown["replays"]) == (
        "CLOSED", "mai", "customer called by phone instead", 0)
    assert shown["closed_at"]


@pytest.mark.parametrize("reason", ["", "   "])
async def test_a_close_says_why(reason: str, fresh: tuple[str, ReceiptStore, OpsStore],
                                capsys: pytest.CaptureFixture[str]) -> None:
    from tollgate.cli import main

    _, receipts, ops = fresh
    dl_id, _ = await replayable(receipts, ops)
    with pytest.raises(SystemExit) as ended:
        main(["ops", "dlq", "close", str(dl_id), "--reason", reason, "--token", "t"])
    assert ended.value.code == Exit.USAGE
    assert "Invalid value for '--reason': say why (recorded)" in capsys.readouterr().err
    assert (await ops.dead_letter_row(dl_id) or {})["status"] == "OPEN"


async def test_a_closed_write_is_off_the_books_and_never_swept(
        fresh: tuple[str, ReceiptStore, OpsStore], tmp_path: Path) -> None:
    url, receipts, ops = fresh
    s = settings(url, tmp_path)
    target = EmptyTarget()
    sweep = SweepActivities(receipts, {"messaging": target})  # type: ignore[dict-item]
    dl_id, key = await replayable(receipts, ops)
    # A send step's dead letter: its receipt stays the sweep's until a person closes it.
    step_wid, step = await open_write(receipts, ReceiptStatus.UNKNOWN)
    step_id = await letter(ops, step_wid, step, code="execute_action_timed_out",
                           error_class="retryable", state="DEAD_LETTERED")
    assert await figures(receipts.pool) == (1, 1, 2, ["1 unknown write(s) open (limit 0)",
                                                      "2 dead letter(s) waiting (limit 0)"])
    assert (await sweep.sweep_receipts(SweepRequest())).still_open == [step]

    for closing in (dl_id, step_id):
        assert await run_ops(["dlq", "close", str(closing), *WHY], s,
                             role="change_owner") == Exit.OK
    assert await figures(receipts.pool) == (0, 0, 0, [])
    target.asked.clear()
    assert (await sweep.sweep_receipts(SweepRequest())).still_open == []
    assert target.asked == []
    # The write stays unknown: no "not sent" is invented.
    assert [(await receipts.get(k)).status for k in (key, step)] == [  # type: ignore[union-attr]
        ReceiptStatus.UNKNOWN, ReceiptStatus.UNKNOWN]


async def test_status_goes_quiet_once_the_only_dead_letter_is_closed(
        pg_server: str, temporal: str, tmp_path: Path) -> None:
    url, dl_id = await lettered_database(pg_server)
    code, out = status(url, tmp_path, temporal=temporal)
    assert code == Exit.ATTENTION, out
    s = settings(url, tmp_path, temporal)
    assert await run_ops(["dlq", "close", str(dl_id), *WHY], s,
                         role="change_owner") == Exit.OK
    code, out = status(url, tmp_path, temporal=temporal)
    assert code == Exit.OK, out
    assert "unknown writes open: 0 (1 closed by hand) · dead letters: none" in out, out
    code, out = status(url, tmp_path, "--json", temporal=temporal)
    report = json.loads(out)
    assert (code, report["open_unknown_writes"], report["unknown_writes_moved_aside"],
            report["unknown_writes_closed_by_hand"], report["needs_a_human"]) == (
        Exit.OK, 0, 0, 1, [])


async def test_a_replay_still_running_is_not_raced(
        fresh: tuple[str, ReceiptStore, OpsStore], env: WorkflowEnvironment, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    url, receipts, ops = fresh
    s = settings(url, tmp_path, env.client.service_client.config.target_host)
    close = ["dlq", "close", "0", *WHY]
    dl_id, key = await replayable(receipts, ops)
    close[2] = str(dl_id)
    assert await ops.approve_dead_letter(dl_id, actor="mai", reason="r")
    assert await ops.claim_replay(dl_id, actor="mai") == 1

    # Claimed, its run not started yet: the command that claimed it is about to.
    assert await run_ops(close, s, role="change_owner") == Exit.REFUSED
    assert "replay 1 was claimed 0 min ago and its run" in capsys.readouterr().err
    # Started: no worker polls its queue, so it runs until it is ended.
    run = await env.client.start_workflow("ReconcileWriteWorkflow", id=f"reconcile/{key}/"
                                          "replay-1", task_queue=f"nobody-{dl_id}")
    assert await run_ops(close, s, role="change_owner") == Exit.REFUSED
    assert f"replay 1 is still running (reconcile/{key}/replay-1)" in capsys.readouterr().err
    assert (await ops.dead_letter_row(dl_id) or {})["status"] == "REPLAYED"
    await run.terminate("the test")
    assert (await run.describe()).status == WorkflowExecutionStatus.TERMINATED
    assert await run_ops(close, s, role="change_owner") == Exit.OK
    assert (await ops.dead_letter_row(dl_id) or {})["status"] == "CLOSED"

    # Claimed 20 minutes ago and never started: its command died, nothing will start it.
    other, _ = await replayable(receipts, ops)
    assert await ops.approve_dead_letter(other, actor="mai", reason="r")
    assert await ops.claim_replay(other, actor="mai") == 1
    await ops.pool.execute("UPDATE dead_letters SET updated_at = now() - interval '20 minutes'"
                           " WHERE id = $1", other)
    assert await run_ops(["dlq", "close", str(other), *WHY], s, role="change_owner") == Exit.OK


async def test_a_close_by_hand_is_no_replay_in_the_metrics(
        fresh: tuple[str, ReceiptStore, OpsStore], tmp_path: Path) -> None:
    """`tollgate_dlq_replays_total{result="already_done"}` counts the replays that found the
    receipt SUCCEEDED (their close's reason begins "receipt already"): an operator's reason
    that happens to begin the same is no replay."""
    url, receipts, ops = fresh
    dl_id, _ = await replayable(receipts, ops)
    assert await run_ops(["dlq", "close", str(dl_id), "--reason", "receipt already settled by "
                          "hand at the target"], settings(url, tmp_path),
                         role="change_owner") == Exit.OK
    figures = await MetricsStore(ops.pool).gauges(datetime.now(UTC))
    assert figures["replays"] == []


async def test_a_close_loses_to_a_replay_claimed_meanwhile(
        fresh: tuple[str, ReceiptStore, OpsStore]) -> None:
    _, receipts, ops = fresh
    dl_id, _ = await replayable(receipts, ops)
    assert await ops.approve_dead_letter(dl_id, actor="mai", reason="r")
    # The close judged the row with no replay; one was claimed before its write.
    assert await ops.claim_replay(dl_id, actor="mai") == 1
    assert not await ops.close_dead_letter(dl_id, actor="lee", reason="r", replays=0)
    assert (await ops.dead_letter_row(dl_id) or {})["status"] == "REPLAYED"
