"""Dead-letter replay through `tollgate ops`: approved first, at most once per approval, never
when the receipt already says the action happened. One message at the target, whatever runs."""

from __future__ import annotations

import uuid
from datetime import timedelta

import asyncpg
import pytest

from adapters.postgres_ops import OpsStore
from adapters.postgres_receipts import ReceiptStore
from contracts import ActionRequest, EventRef, ReceiptStatus, ReconcileRequest
from policies.keys import action_key
from tests.faults.conftest import Rig
from tollgate.cli.ops import ops_main


async def seed_unreconciled(rig: Rig, pool: asyncpg.Pool) -> tuple[int, str]:
    """A write that ended unknown and was dead-lettered, as the reconciler leaves it."""
    event_id = f"evt-{uuid.uuid4().hex[:8]}"
    ref = EventRef(workflow_id=f"event/acme/{event_id}", tenant_id="acme", event_id=event_id,
                   event_type="CARE_DUE", entity_id=rig.customer(), correlation_id="corr-dlq",
                   schema_version=3)
    key = action_key("acme", event_id, "messaging", "send_message")
    action = ActionRequest(ref=ref, adapter="messaging", action="send_message", action_key=key,
                           channel="sms", body="Reminder: Miu's check-up is due.",
                           policy_version="2026-11-30.1", approved_by="an.tran")
    receipts = ReceiptStore(pool)
    await receipts.open_receipt(action, "fp")
    fence = await receipts.begin_attempt(key)
    await receipts.settle(key, ReceiptStatus.UNKNOWN, fence=fence, error_class="unknown_write",
                          error_code="target_504")
    request = ReconcileRequest(ref=ref, action=action, lookup_window=timedelta(seconds=1))
    await OpsStore(pool).dead_letter(
        workflow_id=ref.workflow_id, error_class="unknown_write", error_code="unreconciled_write",
        state="STOPPED", owner="messaging-oncall", replay_plan="check by hand", tenant_id="acme",
        redacted_payload=None, event_id=event_id, correlation_id="corr-dlq", action_key=key,
        replay_input=request.model_dump(mode="json"))
    dl_id = await pool.fetchval("SELECT id FROM dead_letters WHERE action_key = $1", key)
    return int(dl_id), key


async def ops(rig: Rig, *argv: str) -> int:
    return await ops_main(list(argv), rig.settings)


@pytest.fixture
async def pool(rig: Rig) -> asyncpg.Pool:
    p = await asyncpg.create_pool(rig.database_url, min_size=1, max_size=2)
    yield p
    await p.close()


async def test_replay_needs_approval_and_runs_at_most_once_per_approval(
    rig: Rig, pool: asyncpg.Pool
) -> None:
    dl_id, key = await seed_unreconciled(rig, pool)
    # Refused (exit 1): no approval yet.
    assert await ops(rig, "dlq", "replay", str(dl_id), "--operator", "op.kim") == 1
    assert await ops(rig, "dlq", "approve", str(dl_id), "--operator", "op.kim",
                     "--reason", "customer confirmed nothing arrived") == 0
    assert await ops(rig, "dlq", "replay", str(dl_id), "--operator", "op.kim") == 0
    receipt = await ReceiptStore(pool).get(key)
    assert receipt is not None and receipt.status == ReceiptStatus.SUCCEEDED
    # Run twice: the approval is used up, and the receipt says it happened anyway.
    assert await ops(rig, "dlq", "replay", str(dl_id), "--operator", "op.kim") == 0
    assert await ops(rig, "dlq", "approve", str(dl_id), "--operator", "op.kim",
                     "--reason", "again") == 1  # refused: closed: the action already happened
    sent = [m for m in rig.standins.messaging.messages() if m["idempotency_key"] == key]
    assert len(sent) == 1
    row = await pool.fetchrow("SELECT status, replays FROM dead_letters"
                              " WHERE id = $1", dl_id)
    assert (row["status"], row["replays"]) == ("CLOSED", 1)


async def test_replay_of_a_write_the_target_already_holds_sends_nothing(
    rig: Rig, pool: asyncpg.Pool
) -> None:
    dl_id, key = await seed_unreconciled(rig, pool)
    await ReceiptStore(pool).settle(key, ReceiptStatus.SUCCEEDED, fence=None, external_id="x-1")
    await ops(rig, "dlq", "approve", str(dl_id), "--operator", "op.kim", "--reason", "retry")
    before = rig.standins.messaging.post_attempts
    assert await ops(rig, "dlq", "replay", str(dl_id), "--operator", "op.kim") == 0
    assert rig.standins.messaging.post_attempts == before
