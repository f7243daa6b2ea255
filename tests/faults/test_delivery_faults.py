"""Duplicates, conflicts and target faults. Each test asserts what a user cares about: at most
one message per key at the target, and every event in exactly one terminal state."""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import UTC, datetime

from temporalio.common import WorkflowIDReusePolicy

from contracts import EventState, IntakeRequest, ReceiptStatus
from policies.signing import sign_json
from tests.conftest import TENANT_SECRETS, signed_event
from tests.faults.conftest import Rig
from workflows.process_event import ProcessEventWorkflow


def new_key() -> str:
    return f"f-{uuid.uuid4().hex[:12]}"


async def messages_for(rig: Rig, action_key: str) -> int:
    return sum(1 for m in rig.standins.messaging.messages() if m["idempotency_key"] == action_key)


async def test_fifty_concurrent_copies_make_one_workflow_and_one_message(rig: Rig) -> None:
    raw = signed_event(rig.customer(), key=new_key())
    acks = await asyncio.gather(*(rig.submit(raw) for _ in range(50)))
    assert len({a.workflow_id for a in acks}) == 1
    assert sorted(a.status for a in acks).count("accepted") == 1
    assert all(a.status in ("accepted", "duplicate") for a in acks)
    await rig.approve(acks[0].workflow_id)
    outcome = await rig.outcome(acks[0].workflow_id)
    assert outcome.state == EventState.SUCCEEDED
    assert outcome.receipt is not None
    assert await messages_for(rig, outcome.receipt.action_key) == 1
    rows = await rig.sql("SELECT state FROM events WHERE workflow_id = $1", acks[0].workflow_id)
    assert [r["state"] for r in rows] == ["SUCCEEDED"]


async def test_duplicate_after_the_workflow_closed_returns_the_old_outcome(rig: Rig) -> None:
    raw = signed_event(rig.customer(), key=new_key())
    first = await rig.submit(raw)
    await rig.approve(first.workflow_id)
    done = await rig.outcome(first.workflow_id)
    again = await rig.submit(raw)
    assert again.status == "duplicate"
    assert again.previous is not None and again.previous.state == EventState.SUCCEEDED
    assert again.previous.receipt == done.receipt
    assert done.receipt is not None and await messages_for(rig, done.receipt.action_key) == 1


async def test_same_key_with_another_payload_is_quarantined_and_sends_nothing(rig: Rig) -> None:
    key, customer = new_key(), rig.customer()
    first = await rig.submit(signed_event(customer, key=key))
    other = json.loads(signed_event(customer, key=key))
    other["payload"]["reminder_kind"] = "checkup"
    other_raw = sign_json(json.dumps(other), TENANT_SECRETS)  # validly signed, other payload
    while_running = await rig.submit(other_raw)
    assert while_running.status == "invalid"
    assert while_running.reason_code == "idempotency_conflict"
    quarantined = await rig.sql("SELECT reason_code FROM quarantine WHERE workflow_id = $1",
                                while_running.workflow_id)
    assert [r["reason_code"] for r in quarantined] == ["idempotency_conflict"]
    await rig.approve(first.workflow_id)
    done = await rig.outcome(first.workflow_id)
    after_close = await rig.submit(other_raw)
    assert after_close.status == "invalid"
    assert after_close.reason_code == "idempotency_conflict"
    assert done.receipt is not None and await messages_for(rig, done.receipt.action_key) == 1


async def test_504_after_write_with_a_late_receipt_is_reconciled_to_one_message(rig: Rig) -> None:
    rig.standins.messaging.inject("fail_after_write", lookup_delay_ms=2500)
    ack = await rig.submit(signed_event(rig.customer(), key=new_key()))
    await rig.approve(ack.workflow_id)
    outcome = await rig.outcome(ack.workflow_id)
    assert outcome.state == EventState.SUCCEEDED
    assert outcome.reason_code == "found_at_target"
    assert outcome.receipt is not None and outcome.receipt.external_id
    assert await messages_for(rig, outcome.receipt.action_key) == 1


async def test_429_waits_the_stated_delay_then_sends_once(rig: Rig) -> None:
    rig.standins.messaging.inject("rate_limit", retry_after=1)
    ack = await rig.submit(signed_event(rig.customer(), key=new_key()))
    await rig.approve(ack.workflow_id)
    outcome = await rig.outcome(ack.workflow_id)
    assert outcome.state == EventState.SUCCEEDED
    assert outcome.receipt is not None and outcome.receipt.attempts == 2
    assert await messages_for(rig, outcome.receipt.action_key) == 1


async def test_target_down_then_back_sends_once_with_the_same_key(rig: Rig) -> None:
    ack = await rig.submit(signed_event(rig.customer(), key=new_key()))
    rig.standins.messaging.down()
    try:
        await rig.approve(ack.workflow_id)
        await asyncio.sleep(2.5)  # a few refused attempts: nothing can have been sent
    finally:
        rig.standins.messaging.up()
    outcome = await rig.outcome(ack.workflow_id)
    assert outcome.state == EventState.SUCCEEDED
    assert outcome.receipt is not None
    assert await messages_for(rig, outcome.receipt.action_key) == 1


async def test_business_rejection_by_the_target_is_final(rig: Rig) -> None:
    rig.standins.messaging.inject("reject")
    ack = await rig.submit(signed_event(rig.customer(), key=new_key()))
    await rig.approve(ack.workflow_id)
    outcome = await rig.outcome(ack.workflow_id)
    assert outcome.state == EventState.REJECTED
    assert outcome.receipt is not None and outcome.receipt.status == ReceiptStatus.REJECTED
    assert outcome.receipt.attempts == 1
    assert await messages_for(rig, outcome.receipt.action_key) == 0


async def test_gate_answers_from_postgres_once_temporal_has_forgotten_the_run(rig: Rig) -> None:
    """A new run under the same workflow id is what a delivery looks like after Temporal's
    retention dropped the first one: PostgreSQL still knows the outcome."""
    raw = signed_event(rig.customer(), key=new_key())
    first = await rig.submit(raw)
    await rig.approve(first.workflow_id)
    done = await rig.outcome(first.workflow_id)
    rerun = await rig.client.start_workflow(
        ProcessEventWorkflow.run, IntakeRequest(raw=raw, received_at=datetime.now(UTC)),
        id=first.workflow_id, task_queue=rig.queue,
        id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE)
    outcome = await rerun.result()
    assert outcome.state == EventState.DUPLICATE
    assert outcome.receipt == done.receipt
    assert done.receipt is not None and await messages_for(rig, done.receipt.action_key) == 1
    rows = await rig.sql("SELECT state FROM events WHERE workflow_id = $1", first.workflow_id)
    assert [r["state"] for r in rows] == ["SUCCEEDED"]  # the first outcome is untouched
