"""``ops status`` reads each replayed dead letter's lookup window from its stored request to tell
a replay that may still run from one that is over (ADR 0066). The window was cast in SQL, so
one row edited by hand into a value that does not cast (``ten minutes``, or a number of days
past what an interval holds) failed the whole statement: ``ops status`` and ``/metrics`` had
nothing to show for every other figure. Now such a replay is named at once, its window marked
unreadable (how long it may run is unknown), and the rest of the screen is as before."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from adapters.postgres.ops import OpsStore
from adapters.postgres.receipts import ReceiptStore
from adapters.postgres.status import StatusStore
from tests.cli.dlq_support import replayable, settings
from tests.cli.helpers import run_ops
from tests.observability.scrape_support import scrape
from tollgate.runtime.exits import Exit


async def replayed(ops: OpsStore, receipts: ReceiptStore, window: str | None = None) -> int:
    """A dead letter approved and replayed once (claimed now), its write still open; its
    stored request's lookup window edited by hand to ``window`` (a JSON value) if given."""
    dl_id, _ = await replayable(receipts, ops)
    assert await ops.approve_dead_letter(dl_id, actor="mai", reason="r")
    assert await ops.claim_replay(dl_id, actor="mai") == 1
    if window is not None:
        await ops.pool.execute(
            "UPDATE dead_letters SET replay_input = jsonb_set(replay_input, '{lookup_window}',"
            " $2::jsonb) WHERE id = $1", dl_id, window)
    return dl_id


async def test_a_window_that_does_not_read_names_its_replay_and_fails_nothing(
        fresh: tuple[str, ReceiptStore, OpsStore], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    url, receipts, ops = fresh
    await replayed(ops, receipts, '"PT20M"')  # as pydantic writes it, claimed now: may run
    await replayed(ops, receipts, '"P1DT2H3.25S"')  # likewise
    # The longest window read: now minus it still a timestamp (some 3,850 years back).
    await replayed(ops, receipts, '"P999Y999999DT999999H999999M999999.999999S"')
    lost = await replayed(ops, receipts)
    await ops.pool.execute("UPDATE dead_letters SET updated_at = now() - interval '2 hours'"
                           " WHERE id = $1", lost)
    worded = await replayed(ops, receipts, '"ten minutes"')  # PostgreSQL: invalid syntax
    huge = await replayed(ops, receipts, '"P9999999999D"')  # PostgreSQL: out of range
    # ISO 8601 that casts, but now minus it is no timestamp: the subtraction would fail.
    ancient = await replayed(ops, receipts, '"P999999Y"')
    number = await replayed(ops, receipts, "600")  # not what the request writes

    snap = await StatusStore(ops.pool).snapshot(datetime.now(UTC))
    named = {r["dead_letter"]: r["window_unreadable"] for r in snap["stale_replays"]}
    assert named == {lost: False, worded: True, huge: True, ancient: True, number: True}

    assert await run_ops(["status"], settings(url, tmp_path)) == Exit.ATTENTION
    [line] = [x for x in capsys.readouterr().out.splitlines()
              if x.startswith("replayed dead letters")]
    assert f"{lost} (replay 1, claimed 2h 00m ago)" in line
    assert f"{worded} (replay 1, lookup window unreadable, claimed 0m ago)" in line

    assert await run_ops(["status", "--json"], settings(url, tmp_path)) == Exit.ATTENTION
    report = json.loads(capsys.readouterr().out)
    assert [r["dead_letter"] for r in report["stale_replays"] if r["window_unreadable"]] == [
        worded, huge, ancient, number]

    page = await scrape(ops.pool)  # /metrics reads the same rows
    assert page[("tollgate_stale_replays",
                 frozenset({"tenant_id": "acme", "adapter": "messaging"}.items()))] == 5


async def test_a_request_that_does_not_read_is_refused_before_its_approval_is_used(
        fresh: tuple[str, ReceiptStore, OpsStore], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The same hand-edited row, approved before the edit: `ops dlq replay` claimed the
    approval, then failed on the request with a multi-line pydantic error and no run."""
    url, receipts, ops = fresh
    dl_id, _ = await replayable(receipts, ops)
    assert await ops.approve_dead_letter(dl_id, actor="mai", reason="r")
    await ops.pool.execute(
        "UPDATE dead_letters SET replay_input = jsonb_set(replay_input, '{lookup_window}',"
        " '\"ten minutes\"') WHERE id = $1", dl_id)
    s = settings(url, tmp_path)  # no Temporal: refused before it would be asked
    for argv, role in ((["dlq", "replay", str(dl_id)], "on_call"),
                       (["dlq", "approve", str(dl_id), "--reason", "again"], "change_owner")):
        assert await run_ops(argv, s, role=role) == Exit.REFUSED
        assert capsys.readouterr().err.strip().splitlines() == [
            f"tollgate: dead letter {dl_id} is not replayed from here: its stored request does "
            "not read (lookup_window); close it (tollgate ops dlq close) and settle the write "
            "by hand"]
    row = await ops.dead_letter_row(dl_id) or {}
    assert (row["status"], row["approvals"], row["replays"]) == ("APPROVED", 1, 0)
