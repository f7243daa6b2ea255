"""Dead letters left REPLAYED where no queue shows them (ADR 0066).

Before ADR 0059's reopening, a replay that stopped again left its dead letter REPLAYED for
good; before ADR 0066, so did a replay whose resend was refused. Migration 0135 brings back
those PostgreSQL alone knows ended (the replay command recorded the end, `stopped`) while the
write is still open: reopened, or closed in favour of the refusal's dead letter. Any other
REPLAYED dead letter whose write is still open past the time its replay can run is named by
`ops status` (its replay ended unseen, or never started), for a person to look at, and at once
when its replay's run recorded its end (`failed`, `cancelled`: ADR 0069)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path

import pytest

from adapters.postgres.ops import OpsStore
from adapters.postgres.receipts import ReceiptStore
from adapters.postgres.status import StatusStore
from contracts import ReceiptStatus
from tests.cli.dlq_support import replayable, settings
from tests.cli.helpers import run_ops
from tests.cli.unknown_write_support import letter
from tollgate.cli.ops_status import needs_a_human
from tollgate.runtime.exits import Exit

MIGRATION = "0135_replayed_dead_letters_left_behind.sql"


async def replayed(ops: OpsStore, receipts: ReceiptStore, result: str | None) -> tuple[int, str]:
    """A dead letter approved and replayed once, its replay's end recorded as ``result`` by
    the command that ran it (None: the command never heard the end)."""
    dl_id, key = await replayable(receipts, ops)
    assert await ops.approve_dead_letter(dl_id, actor="mai", reason="r")
    assert await ops.claim_replay(dl_id, actor="mai") == 1
    if result is not None:
        await ops.record_replay_result(dl_id, actor="mai", replay=1, result=result)
    return dl_id, key


async def test_migration_0135_brings_back_the_replays_known_to_have_stopped(
        fresh: tuple[str, ReceiptStore, OpsStore]) -> None:
    _, receipts, ops = fresh
    stopped, _ = await replayed(ops, receipts, "stopped")
    refused, refused_key = await replayed(ops, receipts, "stopped")
    wid = await ops.pool.fetchval("SELECT workflow_id FROM dead_letters WHERE id = $1", refused)
    newer = await letter(ops, wid, refused_key, code="no_consent_at_send",
                         error_class="rejected")
    unheard, _ = await replayed(ops, receipts, None)  # may still run: left alone
    settled, settled_key = await replayed(ops, receipts, "stopped")
    await receipts.settle(settled_key, ReceiptStatus.SUCCEEDED, fence=None, external_id="m-1")

    sql = (resources.files("adapters.postgres.migrations") / MIGRATION).read_text()
    for _ in range(2):  # a second run finds nothing more to do
        await ops.pool.execute(sql)

    rows = {r["id"]: (r["status"], r["closed_by"], r["closed_reason"]) for r in await
            ops.pool.fetch("SELECT id, status, closed_by, closed_reason FROM dead_letters")}
    assert rows == {
        stopped: ("OPEN", None, None),
        refused: ("CLOSED", "migration:0135", f"replay 1 had its resend refused: superseded by "
                  f"dead letter {newer} (no_consent_at_send), which holds the write now"),
        newer: ("OPEN", None, None),
        unheard: ("REPLAYED", None, None),
        settled: ("REPLAYED", None, None),
    }
    audit = await ops.pool.fetch("SELECT target, action, detail FROM audit"
                                 " WHERE actor = 'migration:0135' ORDER BY id")
    assert sorted((r["target"], r["action"]) for r in audit) == sorted([
        (f"dead_letter/{refused}", "dlq_close"), (f"dead_letter/{stopped}", "dlq_reopen")])
    assert [json.loads(r["detail"]).get("replays") for r in audit
            if r["action"] == "dlq_reopen"] == [1]
    # The reopened one waits for a person again: approve, then replay.
    assert await ops.approve_dead_letter(stopped, actor="mai", reason="again", replays=1)


async def test_status_names_a_replayed_dead_letter_in_no_queue(
        fresh: tuple[str, ReceiptStore, OpsStore], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    url, receipts, ops = fresh
    await replayed(ops, receipts, None)  # claimed just now: it may well run, not named
    lost, _ = await replayed(ops, receipts, None)
    # Its lookup window is 10 minutes (the request's default): claimed 2 hours ago, any run
    # of it has ended, and its write is still open.
    await ops.pool.execute("UPDATE dead_letters SET updated_at = now() - interval '2 hours'"
                           " WHERE id = $1", lost)
    # Claimed just now too, but its run recorded its end (ADR 0069): over, named at once.
    cancelled, _ = await replayed(ops, receipts, None)
    assert await ops.record_replay_result(cancelled, actor=None, replay=1, result="cancelled")
    snap = await StatusStore(ops.pool).snapshot(datetime.now(UTC))
    assert [(r["dead_letter"], r["replay"]) for r in snap["stale_replays"]] == [
        (lost, 1), (cancelled, 1)]
    assert [r["ended"] for r in snap["stale_replays"]] == [None, "cancelled"]
    assert 7190 < snap["stale_replays"][0]["claimed_age_s"] < 7300
    why = needs_a_human({**snap, "outbox": {}}, max_past_sla=0, max_unknown=10,
                        max_dead_letters=10, max_open_age_s=3600)
    assert why == [f"2 replayed dead letter(s) in no queue: {lost}, {cancelled} "
                   "(docs/runbook.md, Dead letters)"]

    assert await run_ops(["status"], settings(url, tmp_path)) == Exit.ATTENTION
    out = capsys.readouterr().out
    [line] = [x for x in out.splitlines() if x.startswith("replayed dead letters")]
    # The one claimed long ago and the one whose end is recorded: the one claimed just now,
    # with no end, is not named.
    assert line == (f"replayed dead letters in no queue (the write still open, its replay "
                    f"ended or claimed longer ago than a replay runs): {lost} (replay 1, "
                    f"claimed 2h 00m ago), {cancelled} (replay 1, ended cancelled, claimed "
                    f"0m ago)")

    assert await run_ops(["status", "--json"], settings(url, tmp_path)) == Exit.ATTENTION
    report = json.loads(capsys.readouterr().out)
    assert [r["dead_letter"] for r in report["stale_replays"]] == [lost, cancelled]
