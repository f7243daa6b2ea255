"""Receipts in real PostgreSQL: one row per key, fenced settles, and the sweep's view of them."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator

import pytest

from adapters.postgres.pool import create_pool
from adapters.postgres.receipts import ReceiptStore
from contracts import ActionRequest, EventRef, ReceiptStatus
from policies.keys import action_key
from tests.conftest import fresh_key


@pytest.fixture
async def receipts(database_url: str) -> AsyncIterator[ReceiptStore]:
    pool = await create_pool(database_url, max_size=4)
    yield ReceiptStore(pool)
    await pool.close()


def action() -> ActionRequest:
    event_id = fresh_key("evt")
    ref = EventRef(workflow_id=f"event/acme/{event_id}", tenant_id="acme", event_id=event_id,
                   event_type="CARE_DUE", entity_id="C-1", correlation_id="c", schema_version=3)
    return ActionRequest(ref=ref, adapter="messaging", action="send_message",
                         action_key=action_key("acme", event_id, "messaging", "send_message"),
                         channel="sms", body="hello", policy_version="v", approved_by="r")


async def test_opening_twice_returns_the_same_receipt(receipts: ReceiptStore) -> None:
    a = action()
    first = await receipts.open_receipt(a, "fp")
    second = await receipts.open_receipt(a, "fp")
    assert first == second
    assert first.status == ReceiptStatus.PENDING
    count = await receipts.pool.fetchval("SELECT count(*) FROM receipts WHERE action_key = $1",
                                         a.action_key)
    assert count == 1


async def test_a_stale_attempt_cannot_overwrite_a_newer_outcome(receipts: ReceiptStore) -> None:
    a = action()
    await receipts.open_receipt(a, "fp")
    old_fence = await receipts.begin_attempt(a.action_key)
    new_fence = await receipts.begin_attempt(a.action_key)
    settled = await receipts.settle(a.action_key, ReceiptStatus.SUCCEEDED, fence=new_fence,
                                    external_id="msg-new")
    late = await receipts.settle(a.action_key, ReceiptStatus.UNKNOWN, fence=old_fence,
                                 error_class="unknown_write", error_code="target_504")
    assert settled.status == late.status == ReceiptStatus.SUCCEEDED
    assert late.external_id == "msg-new"
    assert late.attempts == 2
    # A final receipt takes no further attempts either.
    assert await receipts.begin_attempt(a.action_key) == -1


async def test_the_sweep_sees_only_open_receipts_older_than_its_threshold(
    receipts: ReceiptStore,
) -> None:
    a, b = action(), action()
    await receipts.open_receipt(a, "fp")
    await receipts.open_receipt(b, "fp")
    await receipts.pool.execute(
        "UPDATE receipts SET updated_at = now() - interval '1 hour' WHERE action_key = $1",
        a.action_key)
    stale = {r["action_key"] for r in await receipts.stale_open(
        await receipts.pool.fetchval("SELECT now() - interval '15 minutes'"), 1000)}
    assert a.action_key in stale
    assert b.action_key not in stale


async def test_unique_key_holds_under_concurrent_opens(receipts: ReceiptStore) -> None:
    import asyncio

    a = action()
    opened = await asyncio.gather(*(receipts.open_receipt(a, "fp") for _ in range(20)))
    assert len({r.action_key for r in opened}) == 1
    assert await receipts.pool.fetchval(
        "SELECT count(*) FROM receipts WHERE action_key = $1", a.action_key) == 1




async def test_a_stale_final_settle_loses_while_the_newer_attempt_is_still_open(
    receipts: ReceiptStore,
) -> None:
    """The fence, not the order of arrival, decides: an older attempt that comes back REJECTED
    while a newer attempt is in flight must not close the receipt under it."""
    a = action()
    await receipts.open_receipt(a, "fp")
    old_fence = await receipts.begin_attempt(a.action_key)
    new_fence = await receipts.begin_attempt(a.action_key)
    late = await receipts.settle(a.action_key, ReceiptStatus.REJECTED, fence=old_fence,
                                 error_class="rejected", error_code="target_422")
    assert late.status == ReceiptStatus.PENDING  # still the newer attempt's to settle
    settled = await receipts.settle(a.action_key, ReceiptStatus.SUCCEEDED, fence=new_fence,
                                    external_id="msg-new")
    assert (settled.status, settled.external_id) == (ReceiptStatus.SUCCEEDED, "msg-new")


@pytest.mark.parametrize("seed", range(40))
async def test_any_order_of_attempts_and_settles_keeps_the_fence_rule(
    receipts: ReceiptStore, seed: int
) -> None:
    """Seeded interleavings of begin/settle, checked after every step against the rule: only
    the newest attempt settles an open receipt, a final receipt never changes, and SUCCEEDED
    happens at most once with the external id of the attempt that won."""
    rng = random.Random(seed)
    a = action()
    await receipts.open_receipt(a, "fp")
    status, fence, external = ReceiptStatus.PENDING, 0, None
    fences: list[int] = []
    for step in range(12):
        if not fences or rng.random() < 0.4:
            got = await receipts.begin_attempt(a.action_key)
            if status in (ReceiptStatus.PENDING, ReceiptStatus.UNKNOWN):
                fence += 1
                assert got == fence
                fences.append(got)
            else:
                assert got == -1
            continue
        which = rng.choice(fences)
        outcome = rng.choice([ReceiptStatus.SUCCEEDED, ReceiptStatus.REJECTED,
                              ReceiptStatus.UNKNOWN])
        ext = f"msg-{seed}-{step}" if outcome == ReceiptStatus.SUCCEEDED else None
        got_receipt = await receipts.settle(a.action_key, outcome, fence=which, external_id=ext)
        if status in (ReceiptStatus.PENDING, ReceiptStatus.UNKNOWN) and which == fence:
            status, external = outcome, ext
        assert (got_receipt.status, got_receipt.external_id) == (status, external)
