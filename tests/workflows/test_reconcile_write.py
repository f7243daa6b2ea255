"""ReconcileWriteWorkflow against a target that neither dedupes by key nor can be looked up:
after the window it must not resend; it stops and leaves a dead letter for an operator."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import timedelta

import asyncpg
import pytest
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from activities.reconcile import ReconcileActivities
from adapters.base import TargetWrite
from adapters.postgres_ops import OpsStore
from adapters.postgres_receipts import ReceiptStore
from adapters.postgres_store import create_pool
from contracts import ActionRequest, EventRef, ReceiptStatus, ReconcileRequest
from policies.keys import action_key
from workflows.reconcile_write import ReconcileWriteWorkflow


class BlindTarget:
    """A target with no idempotency and no lookup: the case automation must not retry."""

    name = "blind"
    dedupes_by_key = False
    supports_lookup = False

    def __init__(self) -> None:
        self.calls = 0

    async def execute(self, request: ActionRequest) -> TargetWrite:
        self.calls += 1
        return TargetWrite(idempotency_key=request.action_key, external_id="should-not-happen")

    async def lookup(self, idempotency_key: str) -> TargetWrite | None:
        raise AssertionError("a target without lookup is never asked")


@pytest.fixture
async def pool(database_url: str) -> AsyncIterator[asyncpg.Pool]:
    p = await create_pool(database_url, max_size=4)
    yield p
    await p.close()


async def test_unknown_write_at_a_blind_target_stops_with_a_dead_letter(
    env: WorkflowEnvironment, pool: asyncpg.Pool
) -> None:
    target = BlindTarget()
    receipts, ops = ReceiptStore(pool), OpsStore(pool)
    event_id = f"evt-{uuid.uuid4().hex[:8]}"
    ref = EventRef(workflow_id=f"event/acme/{event_id}", tenant_id="acme", event_id=event_id,
                   event_type="CARE_DUE", entity_id="C-1", correlation_id="corr", schema_version=3)
    action = ActionRequest(ref=ref, adapter="blind", action="send_message",
                           action_key=action_key("acme", event_id, "blind", "send_message"),
                           channel="sms", body="hello", policy_version="v", approved_by="r")
    await receipts.open_receipt(action, "fp")
    fence = await receipts.begin_attempt(action.action_key)
    await receipts.settle(action.action_key, ReceiptStatus.UNKNOWN, fence=fence,
                          error_class="unknown_write", error_code="timeout")
    activities = ReconcileActivities(receipts, ops, {"blind": target})
    queue = f"rc-{uuid.uuid4().hex[:8]}"
    async with Worker(env.client, task_queue=queue, workflows=[ReconcileWriteWorkflow],
                      activities=[activities.lookup_write, activities.resend_write,
                                  activities.dead_letter_write]):
        result = await env.client.execute_workflow(
            ReconcileWriteWorkflow.run,
            ReconcileRequest(ref=ref, action=action, lookup_window=timedelta(minutes=10)),
            id=f"reconcile/{action.action_key}", task_queue=queue)
    assert result.status == "stopped"
    assert target.calls == 0  # never resent blind
    receipt = await receipts.get(action.action_key)
    assert receipt is not None and receipt.status == ReceiptStatus.UNKNOWN
    letters = await pool.fetch("SELECT error_code, status FROM dead_letters WHERE action_key = $1",
                               action.action_key)
    assert [(r["error_code"], r["status"]) for r in letters] == [("unreconciled_write", "OPEN")]
