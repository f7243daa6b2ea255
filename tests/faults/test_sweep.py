"""The scheduled receipt sweep, run once on the real dev server against a deduping and a
non-deduping target: it settles an open receipt the target does hold, and reports a receipt
marked sent that the target does not know. It never sends."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import asyncpg
import pytest

from adapters.http.messaging import MessagingHttpAdapter
from adapters.postgres.receipts import ReceiptStore
from contracts import ActionRequest, EventRef, ReceiptStatus
from contracts.sweep import SweepReport, SweepRequest
from policies.keys import action_key
from tests.conftest import fresh_key
from tests.faults.conftest import Rig
from workflows.sweep import ReceiptSweepWorkflow


def action(customer: str) -> ActionRequest:
    event_id = fresh_key("evt")
    ref = EventRef(workflow_id=f"event/acme/{event_id}", tenant_id="acme", event_id=event_id,
                   event_type="CARE_DUE", entity_id=customer, correlation_id="corr-sweep",
                   schema_version=3)
    return ActionRequest(ref=ref, adapter="messaging", action="send_message",
                         action_key=action_key("acme", event_id, "messaging", "send_message"),
                         channel="sms", body="Reminder", policy_version="v", approved_by="r")


@pytest.fixture
async def receipts(rig: Rig) -> AsyncIterator[ReceiptStore]:
    pool = await asyncpg.create_pool(rig.database_url, min_size=1, max_size=2)
    yield ReceiptStore(pool)
    await pool.close()


async def test_sweep_settles_what_the_target_holds_and_reports_drift(
    rig: Rig, receipts: ReceiptStore
) -> None:
    """Fault: a receipt left PENDING for an hour although the target took the message (the
    worker never heard back), and a receipt SUCCEEDED that the target does not know (drift).
    Evidence: the sweep's report names both keys; the PENDING receipt is now SUCCEEDED with
    the stored message's id.
    Invariant: the sweep sends nothing: the only POST is the one the target already took."""
    held, lost = action(rig.customer()), action(rig.customer())
    target = MessagingHttpAdapter(rig.standins.messaging_url)
    try:
        await target.execute(held)  # reached the target; the receipt never heard back
    finally:
        await target.aclose()
    await receipts.open_receipt(held, "fp")
    await receipts.open_receipt(lost, "fp")
    await receipts.settle(lost.action_key, ReceiptStatus.SUCCEEDED, fence=None, external_id="x")
    await receipts.pool.execute(
        "UPDATE receipts SET updated_at = now() - interval '1 hour' WHERE action_key = $1",
        held.action_key)

    report: SweepReport = await rig.client.execute_workflow(
        ReceiptSweepWorkflow.run, SweepRequest(recheck_recent=1000),
        id=f"sweep-{uuid.uuid4().hex[:6]}", task_queue=rig.queue)

    assert held.action_key in report.settled_found_at_target
    assert lost.action_key in report.drift_missing_at_target
    settled = await receipts.get(held.action_key)
    assert settled is not None and settled.status == ReceiptStatus.SUCCEEDED
    assert settled.external_id == rig.standins.messaging.get_by_key(held.action_key)["id"]
    assert (rig.posts(held.action_key), rig.messages(held.action_key)) == (1, 1)
    assert (rig.posts(lost.action_key), rig.messages(lost.action_key)) == (0, 0)
