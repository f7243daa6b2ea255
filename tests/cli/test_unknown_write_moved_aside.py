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
from datetime import UTC, datetime
from pathlib import Path

import asyncpg
import pytest

from activities.sweep import SweepActivities
from adapters.ports.targets import TargetWrite
from adapters.postgres.ops import OpsStore
from adapters.postgres.receipts import ReceiptStore
from adapters.postgres.status import StatusStore
from adapters.postgres.store import create_pool
from contracts import ActionRequest, EventRef, ReceiptStatus
from contracts.actions import UNRECONCILED_CODE, UNRECONCILED_OWNER, UNRECONCILED_PLAN
from contracts.sweep import SweepRequest
from policies.keys import action_key
from tests.cli.ops_status_support import status
from tests.conftest import fresh_key
from tests.pg_databases import fresh_database
from tollgate.cli.ops_status import needs_a_human
from tollgate.runtime.exits import Exit


class EmptyTarget:
    """A target that can be looked up, holds nothing, and remembers what it was asked."""

    supports_lookup = True
    dedupes_by_key = True

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def lookup(self, key: str) -> TargetWrite | None:
        self.asked.append(key)
        return None


@pytest.fixture
async def stores(pool: asyncpg.Pool) -> AsyncIterator[tuple[ReceiptStore, OpsStore]]:
    yield ReceiptStore(pool), OpsStore(pool)


async def open_write(receipts: ReceiptStore, status: ReceiptStatus = ReceiptStatus.UNKNOWN
                     ) -> tuple[str, str]:
    """A receipt left open (UNKNOWN, or PENDING) 20 minutes ago: the sweep's to look up."""
    event_id = fresh_key("evt")
    ref = EventRef(workflow_id=f"event/acme/{event_id}", tenant_id="acme", event_id=event_id,
                   event_type="CARE_DUE", entity_id="C-1", correlation_id="c",
                   schema_version=3)
    a = ActionRequest(ref=ref, adapter="messaging", action="send_message",
                      action_key=action_key("acme", event_id, "messaging", "send_message"),
                      channel="sms", body="hi", policy_version="v", approved_by="r")
    await receipts.open_receipt(a, "fp")
    if status == ReceiptStatus.UNKNOWN:
        await receipts.settle(a.action_key, status, fence=None, error_class="unknown_write",
                              error_code="gateway_timeout")
    await receipts.pool.execute("UPDATE receipts SET updated_at = now() - interval '20 minutes'"
                                " WHERE action_key = $1", a.action_key)
    return ref.workflow_id, a.action_key


async def letter(ops: OpsStore, workflow_id: str, key: str, *, code: str = UNRECONCILED_CODE,
                 error_class: str = "unknown_write", state: str = "STOPPED") -> int:
    """A dead letter for the write: the reconciler's by default (``ops close
    --unresolved-write`` writes the same)."""
    await ops.dead_letter(workflow_id=workflow_id, error_class=error_class, error_code=code,
                          state=state, owner=UNRECONCILED_OWNER, replay_plan=UNRECONCILED_PLAN,
                          redacted_payload=None, tenant_id="acme", event_id=None,
                          correlation_id="c", action_key=key)
    return int(await ops.pool.fetchval(
        "SELECT id FROM dead_letters WHERE workflow_id = $1 AND error_code = $2",
        workflow_id, code))


async def lettered_database(pg_server: str) -> tuple[str, int]:
    """A fresh database whose one unknown write the reconciler moved aside to a dead letter:
    its URL and the dead letter's id."""
    url = await fresh_database(pg_server)
    pool = await create_pool(url, max_size=2)
    try:
        wid, key = await open_write(ReceiptStore(pool))
        return url, await letter(OpsStore(pool), wid, key)
    finally:
        await pool.close()


async def figures(pool: asyncpg.Pool) -> tuple[int, int, int, list[str]]:
    """Open unknown writes, moved aside, waiting dead letters, and why it needs a human."""
    snap = await StatusStore(pool).snapshot(datetime.now(UTC))
    why = needs_a_human({**snap, "outbox": {}}, max_past_sla=0, max_unknown=0,
                        max_dead_letters=0, max_open_age_s=3600)
    return (snap["open_unknown_writes"], snap["unknown_writes_moved_aside"],
            sum(r["count"] for r in snap["dead_letters"]), why)


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
