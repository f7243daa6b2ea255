"""The tamper-evident audit chain in real PostgreSQL: rows written by the ordinary stores chain
themselves, and an edited, deleted or smuggled row is named by the check."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest

from adapters.postgres.audit import AuditStore, chain_shard
from adapters.postgres.pool import create_pool
from adapters.postgres.receipts import ReceiptStore
from contracts import ActionRequest, EventRef, ReceiptStatus
from policies.keys import action_key
from tests.adapters.audit_chain_support import event_ids_in_shards
from tests.conftest import fresh_key


@pytest.fixture
async def stores(database_url: str) -> AsyncIterator[tuple[AuditStore, ReceiptStore]]:
    pool = await create_pool(database_url, max_size=4)
    yield AuditStore(pool), ReceiptStore(pool)
    await pool.close()


async def an_event(receipts: ReceiptStore, tenant: str = "acme", event_id: str = "") -> str:
    """Two transitions, one review decision and a receipt settled after one attempt."""
    event_id = event_id or fresh_key("evt")
    wf = f"event/{tenant}/{event_id}"
    pool = receipts.pool
    for seq, (a, b) in enumerate([(None, "RECEIVED"), ("RECEIVED", "VALIDATED")], start=1):
        await pool.execute(
            "INSERT INTO state_transitions (workflow_id, seq, from_state, to_state, actor,"
            " reason) VALUES ($1, $2, $3, $4, 'system', 'ok')", wf, seq, a, b)
    await pool.execute(
        "INSERT INTO review_decisions (workflow_id, decision_key, tenant_id, request_id,"
        " draft_version, decision, reviewer, role, reason, accepted)"
        " VALUES ($1, $1 || '#a1', $2, 'rq', 1, 'approve', 'rita', 'care_lead', 'fine', true)",
        wf, tenant)
    ref = EventRef(workflow_id=wf, tenant_id=tenant, event_id=event_id, event_type="CARE_DUE",
                   entity_id="C-1", correlation_id="c", schema_version=3)
    req = ActionRequest(ref=ref, adapter="messaging", action="send_message",
                        action_key=action_key(tenant, event_id, "messaging", "send_message"),
                        channel="sms", body="hello", policy_version="v", approved_by="rita")
    await receipts.open_receipt(req, "fp")
    fence = await receipts.begin_attempt(req.action_key)
    await receipts.settle(req.action_key, ReceiptStatus.SUCCEEDED, fence=fence,
                          external_id="msg-1")
    return wf


async def test_rows_written_by_the_stores_form_an_intact_chain(
    stores: tuple[AuditStore, ReceiptStore],
) -> None:
    audit, receipts = stores
    wf = await an_event(receipts)
    chain = await audit.chain(wf)
    # 2 transitions, 1 decision, the receipt opened, attempted and settled: 6 entries in order.
    assert [e["n"] for e in chain] == [1, 2, 3, 4, 5, 6]
    assert [e["source"] for e in chain][:3] == ["state_transitions"] * 2 + ["review_decisions"]
    assert await audit.verify_event(wf) == []


async def test_an_edited_transition_is_named(
    stores: tuple[AuditStore, ReceiptStore],
) -> None:
    audit, receipts = stores
    wf = await an_event(receipts)
    other = await an_event(receipts)
    await receipts.pool.execute("UPDATE state_transitions SET reason = 'covered up'"
                                " WHERE workflow_id = $1 AND seq = 2", wf)
    problems = await audit.verify_event(wf)
    assert [p.line() for p in problems] == [
        f"{wf} state_transitions 2: row was edited after it was chained"]
    assert await audit.verify_event(other) == []


async def test_a_deleted_decision_and_a_deleted_chain_entry_are_named(
    stores: tuple[AuditStore, ReceiptStore],
) -> None:
    audit, receipts = stores
    wf = await an_event(receipts)
    await receipts.pool.execute("DELETE FROM review_decisions WHERE workflow_id = $1", wf)
    assert [p.problem for p in await audit.verify_event(wf)] == ["row was deleted"]
    await receipts.pool.execute("DELETE FROM audit_chain WHERE workflow_id = $1 AND n = 3", wf)
    problems = await audit.verify_event(wf)
    assert any("chain broken before entry 4" in p.problem for p in problems)


async def test_a_whole_chain_deleted_shows_at_the_tenant_head(
    stores: tuple[AuditStore, ReceiptStore],
) -> None:
    audit, receipts = stores
    tenant = f"t{uuid.uuid4().hex[:6]}"
    # Both events under one head shard (migration 0132), so that head counts both chains.
    ids = event_ids_in_shards(tenant, [3, 3])
    kept, gone = [await an_event(receipts, tenant, event_id) for event_id in ids]
    assert (await audit.verify_all(tenant)) == (2, [])
    for table in ("state_transitions", "review_decisions", "receipts", "audit_chain"):
        await receipts.pool.execute(f"DELETE FROM {table} WHERE workflow_id = $1", gone)
    checked, problems = await audit.verify_all(tenant)
    assert checked == 1 and kept
    assert [p.source for p in problems] == ["audit_chain_heads"]
    assert "head says 12 entries, the chains hold 6" in problems[0].problem


async def test_a_whole_chain_deleted_alone_in_its_shard_shows_at_that_shards_head(
    stores: tuple[AuditStore, ReceiptStore],
) -> None:
    audit, receipts = stores
    tenant = f"t{uuid.uuid4().hex[:6]}"
    ids = event_ids_in_shards(tenant, [2, 5])
    kept, gone = [await an_event(receipts, tenant, event_id) for event_id in ids]
    for table in ("state_transitions", "review_decisions", "receipts", "audit_chain"):
        await receipts.pool.execute(f"DELETE FROM {table} WHERE workflow_id = $1", gone)
    checked, problems = await audit.verify_all(tenant)
    # The deleted event's shard is empty now, yet its head remembers six entries.
    assert checked == 1 and await audit.verify_event(kept) == []
    assert [p.line() for p in problems] == [
        f"tenant/{tenant} audit_chain_heads {tenant}: head says 6 entries, the chains hold 0"
        " in shard 5 (whole entries were deleted or added)"]


async def test_python_and_postgresql_agree_on_every_chain_ids_shard(
    stores: tuple[AuditStore, ReceiptStore],
) -> None:
    audit, _ = stores
    ids = [f"event/acme/evt-{i}" for i in range(64)] + ["contacts/acme", "event/ü/é"]
    rows = await audit.pool.fetch("SELECT w, audit_chain_shard(w) AS s FROM unnest($1::text[]) w",
                                  ids)
    assert {r["w"]: r["s"] for r in rows} == {w: chain_shard(w) for w in ids}
    assert {chain_shard(w) for w in ids} == set(range(8))
