"""An unknown write the reconciler gave up on (or `ops close --unresolved-write` on its
evidence) is moved aside: its receipt stays open, as nobody knows whether it was sent, and its
dead letter awaits a person. It was still counted as an open unknown write by `ops status`
beside that dead letter, and reported `still open` by every sweep, which never went quiet. Now
it is the dead letter's: counted once, under dead letters (still exit 6), named moved aside,
and left alone by the sweep; a replay makes it live again. A send step's dead letter moves
nothing aside: no lookup ran for its receipt, the sweep's is the first."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from activities.sweep import SweepActivities
from adapters.postgres.ops import OpsStore
from adapters.postgres.receipts import ReceiptStore
from contracts import ReceiptStatus
from contracts.sweep import SweepRequest
from tests.cli.ops_status_support import status
from tests.cli.unknown_write_support import (
    EmptyTarget,
    figures,
    letter,
    lettered_database,
    open_write,
)
from tollgate.runtime.exits import Exit


@pytest.fixture
async def stores(pool: asyncpg.Pool) -> AsyncIterator[tuple[ReceiptStore, OpsStore]]:
    yield ReceiptStore(pool), OpsStore(pool)


async def test_a_write_moved_aside_is_its_dead_letters_until_a_replay(
        stores: tuple[ReceiptStore, OpsStore]) -> None:
    receipts, ops = stores
    target = EmptyTarget()
    sweep = SweepActivities(receipts, {"messaging": target})  # type: ignore[dict-item]
    live = await open_write(receipts)
    # The reconciler's dead letter, and the one of a resend the approval no longer covered.
    aside_wid, aside = await open_write(receipts)
    aside_id = await letter(ops, aside_wid, aside)
    refused_wid, refused = await open_write(receipts)
    await letter(ops, refused_wid, refused, code="no_consent_at_send", error_class="rejected")
    # `ops close --unresolved-write` of a run terminated with its attempt in flight.
    closed_wid, closed = await open_write(receipts, ReceiptStatus.PENDING)
    await letter(ops, closed_wid, closed)
    # A send step given up before anyone looked: its receipt is still the sweep's.
    step_wid, step = await open_write(receipts, ReceiptStatus.PENDING)
    await letter(ops, step_wid, step, code="execute_action_timed_out",
                 error_class="retryable", state="DEAD_LETTERED")

    report = await sweep.sweep_receipts(SweepRequest())
    assert sorted(report.still_open) == sorted([live[1], step])
    assert sorted(target.asked) == sorted([live[1], step])
    assert await figures(receipts.pool) == (1, 3, 4, ["1 unknown write(s) open (limit 0)",
                                                      "4 dead letter(s) waiting (limit 0)"])
    # Approved and not replayed yet: still the dead letter's.
    assert await ops.approve_dead_letter(aside_id, actor="op.kim", reason="not at the target")
    assert (await sweep.sweep_receipts(SweepRequest())).still_open.count(aside) == 0
    assert (await figures(receipts.pool))[:3] == (1, 3, 4)
    # The replay takes its approval: the write is live again, looked up and counted open.
    assert await ops.claim_replay(aside_id, actor="op.kim") == 1
    assert aside in (await sweep.sweep_receipts(SweepRequest())).still_open
    assert await figures(receipts.pool) == (2, 2, 3, ["2 unknown write(s) open (limit 0)",
                                                      "3 dead letter(s) waiting (limit 0)"])


async def test_status_names_it_moved_aside_and_still_needs_a_human(
        pg_server: str, temporal: str, tmp_path: Path) -> None:
    url, _ = await lettered_database(pg_server)
    code, out = status(url, tmp_path, temporal=temporal)
    assert code == Exit.ATTENTION, out
    assert ("unknown writes open: 0 (1 moved aside to dead letters) · dead letters: "
            "unreconciled_write 1") in out, out
    assert out.splitlines()[-1] == "needs a human: 1 dead letter(s) waiting (limit 0)", out
    code, out = status(url, tmp_path, "--json", temporal=temporal)
    report = json.loads(out)
    assert (code, report["open_unknown_writes"], report["unknown_writes_moved_aside"]) == (
        Exit.ATTENTION, 0, 1)
