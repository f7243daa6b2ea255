"""The send step's one-statement reads and its receipt-plus-transition write, in real PostgreSQL."""

from __future__ import annotations

import asyncpg

from activities.attempt import attempt_write
from adapters.ports.stores.receipts import OPENING_FENCE
from adapters.postgres.execute import SendReads, open_and_record, read_before_send
from adapters.postgres.ops import OpsStore
from adapters.postgres.receipts import ReceiptStore
from adapters.postgres.rollout import RolloutStore
from contracts import (
    ActionRequest,
    ReceiptStatus,
)
from contracts.rollout import RolloutMode
from tests.adapters.postgres_execute_support import (
    Target,
    action,
    executing,
    pool,
)

__all__ = ["pool"]  # the fixture, from postgres_execute_support.py


async def reads(pool: asyncpg.Pool, a: ActionRequest) -> SendReads:
    return await read_before_send(pool, tenant_id=a.ref.tenant_id, adapter=a.adapter,
                                  workflow_id=a.ref.workflow_id, draft_version=1,
                                  action_key=a.action_key)


async def test_one_read_sees_what_the_four_stores_see(pool: asyncpg.Pool) -> None:
    a = action()
    first = await reads(pool, a)
    assert (first.switch_row, first.approved, first.receipt, first.rollout) == (
        False, False, None, None)
    await OpsStore(pool).set_switch(adapter="messaging", tenant_id=a.ref.tenant_id,
                                    closed=True, reason="drill", actor="ops")
    await RolloutStore(pool).set_mode(tenant_id=a.ref.tenant_id, adapter="messaging",
                                      mode=RolloutMode.CANARY, actor="ops", reason="r", canary=2)
    opened = await ReceiptStore(pool).open_receipt(a, "fp")
    later = await reads(pool, a)
    assert later.switch_row
    assert later.receipt == opened == await ReceiptStore(pool).get(a.action_key)
    assert later.rollout is not None
    assert (later.rollout["mode"], later.rollout["canary_remaining"]) == ("canary", 2)


async def test_no_canary_slot_is_taken_once_a_receipt_holds_the_key(pool: asyncpg.Pool) -> None:
    a = action()
    rollout = RolloutStore(pool)
    await rollout.set_mode(tenant_id=a.ref.tenant_id, adapter="messaging",
                           mode=RolloutMode.CANARY, actor="ops", reason="r", canary=1)
    row = (await reads(pool, a)).rollout
    await ReceiptStore(pool).open_receipt(a, "fp")  # a concurrent attempt got there first
    decision = await rollout.decide_row(row, a.ref.event_id, a.action_key)
    assert not decision.send
    assert (await rollout.mode_of(a.ref.tenant_id, "messaging") or {})["canary_remaining"] == 1


async def test_receipt_and_transition_are_written_together_or_not_at_all(
        pool: asyncpg.Pool) -> None:
    a, b = action(), action()
    opened = await open_and_record(pool, a, "fp", mode="assisted", step=executing(a))
    assert opened is not None and opened.status == ReceiptStatus.PENDING
    assert opened.attempts == 1  # the opener's attempt (below)
    await ReceiptStore(pool).open_receipt(b, "fp")
    assert await open_and_record(pool, b, "fp", mode="assisted", step=executing(b)) is None
    seqs = {r["workflow_id"]: r["to_state"] for r in await pool.fetch(
        "SELECT workflow_id, to_state FROM state_transitions WHERE workflow_id = ANY($1)",
        [a.ref.workflow_id, b.ref.workflow_id])}
    assert seqs == {a.ref.workflow_id: "EXECUTING"}


async def test_a_would_send_receipt_is_opened_with_its_executing_step(
        pool: asyncpg.Pool) -> None:
    """A send the rollout mode holds back opens a final WOULD_SEND receipt, no attempt
    counted, and its APPROVED -> EXECUTING under the send's number in the same statement: the
    run's STOPPED follows it with no gap (docs/rollout.md). A key already held writes nothing."""
    a, b = action(), action()
    opened = await open_and_record(pool, a, "fp", mode="shadow", step=executing(a),
                                   would_send="shadow_would_send")
    assert opened is not None
    assert (opened.status, opened.attempts, opened.error_code, opened.rollout_mode) == (
        ReceiptStatus.WOULD_SEND, 0, "shadow_would_send", "shadow")
    await ReceiptStore(pool).open_receipt(b, "fp")
    assert await open_and_record(pool, b, "fp", mode="shadow", step=executing(b),
                                 would_send="shadow_would_send") is None
    rows = {r["workflow_id"]: (r["seq"], r["to_state"]) for r in await pool.fetch(
        "SELECT workflow_id, seq, to_state FROM state_transitions WHERE workflow_id = ANY($1)",
        [a.ref.workflow_id, b.ref.workflow_id])}
    assert rows == {a.ref.workflow_id: (9, "EXECUTING")}


async def receipt_entries(pool: asyncpg.Pool, a: ActionRequest) -> list[str]:
    return [r["op"] for r in await pool.fetch(
        "SELECT op FROM audit_chain WHERE workflow_id = $1 AND source = 'receipts' ORDER BY n",
        a.ref.workflow_id)]


async def test_the_opening_counts_the_first_attempt_and_its_send_takes_no_other(
        pool: asyncpg.Pool) -> None:
    a, receipts, target = action(), ReceiptStore(pool), Target()
    assert await open_and_record(pool, a, "fp", mode="assisted", step=executing(a)) is not None
    row = await pool.fetchrow("SELECT attempts, fence FROM receipts WHERE action_key = $1",
                              a.action_key)
    assert row is not None and (row["attempts"], row["fence"]) == (1, OPENING_FENCE)
    sent = await attempt_write(receipts, target, a, from_pending=True, fence=OPENING_FENCE)
    assert (sent.status, sent.receipt.status, sent.receipt.attempts) == (
        "succeeded", ReceiptStatus.SUCCEEDED, 1)
    assert sent.receipt.external_id == "msg-1" and target.calls == 1
    # Chained twice: opened (with its attempt), settled. A separate attempt update made three.
    assert await receipt_entries(pool, a) == ["INSERT", "UPDATE"]


async def test_an_attempt_after_the_opener_takes_a_newer_fence_and_the_openers_settle_loses(
        pool: asyncpg.Pool) -> None:
    a, receipts, target = action(), ReceiptStore(pool), Target()
    assert await open_and_record(pool, a, "fp", mode="assisted", step=executing(a)) is not None
    # A retried attempt (the opener's answer was lost, say) finds the receipt and begins anew.
    retried = await attempt_write(receipts, target, a, from_pending=True)
    assert retried.receipt.status == ReceiptStatus.SUCCEEDED
    assert retried.receipt.external_id == "msg-1" and retried.receipt.attempts == 2
    fence = await pool.fetchval("SELECT fence FROM receipts WHERE action_key = $1",
                                a.action_key)
    assert fence == OPENING_FENCE + 1
    # The opener's late settle carries the older fence: the newer outcome stands.
    late = await receipts.settle(a.action_key, ReceiptStatus.UNKNOWN, fence=OPENING_FENCE,
                                 error_class="unknown_write", error_code="timeout")
    assert (late.status, late.external_id, late.error_code) == (
        ReceiptStatus.SUCCEEDED, "msg-1", None)


async def test_a_receipt_opened_elsewhere_still_costs_its_attempt_an_update(
        pool: asyncpg.Pool) -> None:
    """A receipt opened by ``open_receipt`` (the store's other opening) counts no attempt: a
    send on it begins its own, one more audited update."""
    a, receipts, target = action(), ReceiptStore(pool), Target()
    opened = await receipts.open_receipt(a, "fp")
    assert opened.attempts == 0
    sent = await attempt_write(receipts, target, a, from_pending=True)
    assert (sent.receipt.status, sent.receipt.attempts) == (ReceiptStatus.SUCCEEDED, 1)
    assert await receipt_entries(pool, a) == ["INSERT", "UPDATE", "UPDATE"]
