"""The consumer that acts (issue 30 item 3): an ORDER_PLACED fanned out on the time-skipping
server, with the real worker assembly, PostgreSQL and stand-ins. The notify consumer hands the
order to the control core as a child ProcessEvent keyed by (event id, consumer): the order
confirmation waits for a named reviewer, an approval sends exactly one message, a redelivered
order starts no second child and sends nothing more, and analytics failing or stuck holds
nothing of it."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from asyncpg.pool import PoolConnectionProxy
from temporalio.api.enums.v1 import WorkflowExecutionStatus
from temporalio.api.testservice.v1 import LockTimeSkippingRequest, UnlockTimeSkippingRequest
from temporalio.client import Client
from temporalio.service import RPCError
from temporalio.testing import WorkflowEnvironment

from adapters.broker.cancel import within
from adapters.postgres.fanout import FanOutStore
from adapters.postgres.order_consumers import order_consumers
from contracts import EventState, FinalOutcome, ReviewAck, ReviewDecision
from contracts.fanout import BusinessEvent, ConsumeRequest, FanOutResult
from policies.keys import fan_out_id
from policies.subscriptions import load_subscriptions
from tests.conftest import (
    Handle,
    fresh_key,
    time_skipping_server,
    wait_review,
    worker_settings,
)
from tests.edge import send_decision
from tests.eventually import eventually
from tollgate.dev.standins import StandIns
from tollgate.intake.publish import publish_event
from tollgate.runtime.workers import draft_worker, main_worker
from workflows.fan_out import ConsumeEventWorkflow, consume_id

CHILD_ID = "event/acme/{event_id}.notify"


class Stuck:
    """Analytics that hangs inside its delivery until the test lets it go."""

    name = "analytics"

    def __init__(self) -> None:
        self.down = False
        self.entered = asyncio.Event()
        self.release = asyncio.Event()

    async def apply(self, conn: PoolConnectionProxy, event: BusinessEvent) -> None:
        self.entered.set()
        await self.release.wait()


@dataclass
class Shop:
    client: Client
    queue: str
    pool: asyncpg.Pool
    database_url: str
    standins: StandIns
    consumers: dict[str, Any] = field(default_factory=dict)


@pytest.fixture
async def env() -> AsyncIterator[WorkflowEnvironment]:
    """A time-skipping server of each test's own: after a test whose order confirmation was
    approved and sent, the module's shared server never skipped time again, so every later test
    waited out the down consumer's retry backoff in real time, 15 s per order. The confirmation
    is an abandoned child that completes after its parent (the notify consumer) closed, and the
    test server then keeps a lock only that parent would have released: the server's doing, not
    a run of ours (docs/testing.md, tests/workflows/test_time_skipping.py)."""
    async with time_skipping_server() as fresh:
        yield fresh


@pytest.fixture
async def shop(env: WorkflowEnvironment, database_url: str, pool: asyncpg.Pool,
               standins: StandIns, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
               ) -> AsyncIterator[Shop]:
    """The main and draft workers as `tollgate dev` runs them, with analytics down (refusing
    every delivery, as TOLLGATE_CONSUMERS_DOWN makes it); a test may swap a consumer."""
    consumers: dict[str, Any] = dict(order_consumers())
    monkeypatch.setattr("tollgate.runtime.workers.order_consumers", lambda: consumers)
    queue = f"tq-{uuid.uuid4().hex[:8]}"
    settings = worker_settings(database_url, standins, tmp_path, queue,
                               TOLLGATE_CONSUMERS_DOWN="analytics")
    async with main_worker(env.client, settings), draft_worker(env.client, settings):
        yield Shop(env.client, queue, pool, database_url, standins, consumers)


def new_order(shop: Shop, *, first_name: str = "Lan") -> BusinessEvent:
    customer = fresh_key("C")
    shop.standins.crm.upsert("acme", customer, first_name=first_name, consent_messaging=True)
    return BusinessEvent(
        event_id=fresh_key("order"), event_type="ORDER_PLACED", schema_version=1,
        tenant_id="acme", occurred_at=datetime.now(UTC),
        payload={"order_id": f"O-{uuid.uuid4().hex[:6]}", "customer_id": customer,
                 "total_cents": 4590, "lines": [{"sku": "SKU-CAT-FOOD", "quantity": 2}]})


def messages_to(shop: Shop, event: BusinessEvent) -> list[dict[str, Any]]:
    customer = event.payload["customer_id"]
    return [m for m in shop.standins.messaging.messages() if m.get("recipient_ref") == customer]


async def fanned_out(client: Client, event_id: str) -> dict[str, tuple[str, str | None]]:
    """The fan-out's result (time skips while it is awaited: the down consumer's backoff)."""
    handle = client.get_workflow_handle(fan_out_id(event_id), result_type=FanOutResult)
    await client.test_service.unlock_time_skipping(UnlockTimeSkippingRequest())
    try:
        result: FanOutResult = await handle.result()
    finally:
        await client.test_service.lock_time_skipping(LockTimeSkippingRequest())
    return {r.consumer: (r.status, r.workflow_id) for r in result.results}


async def approve(shop: Shop, handle: Handle, ticket: dict[str, Any]) -> ReviewAck:
    return await send_decision(handle, ReviewDecision(
        request_id=ticket["request_id"], decision="approve", reviewer="an.tran",
        role="order_desk", reason="order and total match", draft_version=ticket["draft_version"]),
        database_url=shop.database_url)


async def result_of(shop: Shop, handle: Handle) -> FinalOutcome:
    """The child's outcome (time skips while it is awaited, as in ``fanned_out``)."""
    client = shop.client
    await client.test_service.unlock_time_skipping(UnlockTimeSkippingRequest())
    try:
        return await handle.result()
    finally:
        await client.test_service.lock_time_skipping(LockTimeSkippingRequest())


async def test_the_confirmation_awaits_review_and_is_sent_once_after_approval(
        shop: Shop) -> None:
    event = new_order(shop)
    assert await publish_event(shop.client, shop.queue, event) == "accepted"
    child_id = CHILD_ID.format(event_id=event.event_id)
    # Analytics is down: its own retries end in its own dead letter; the others are untouched.
    assert await fanned_out(shop.client, event.event_id) == {
        "inventory": ("delivered", None), "notify": ("handed_over", child_id),
        "analytics": ("dead_lettered", None)}
    assert list(await FanOutStore(shop.pool).dead_letters(event.event_id)) == ["analytics"]

    handle: Handle = shop.client.get_workflow_handle(child_id, result_type=FinalOutcome)
    ticket = await wait_review(handle)
    assert ticket["draft"]["message"].startswith("Hi Lan, thank you for your order "
                                                 f"{event.payload['order_id']}")
    assert "45.90" in ticket["draft"]["message"]
    assert set(ticket["route"]["approver_roles"]) == {"order_desk", "reviewer"}
    assert messages_to(shop, event) == []  # nothing goes out before a person says yes

    assert (await approve(shop, handle, ticket)).accepted
    outcome = await result_of(shop, handle)
    assert outcome.state == EventState.SUCCEEDED and outcome.receipt is not None
    sent = messages_to(shop, event)
    assert len(sent) == 1 and event.payload["order_id"] in sent[0]["body"]
    row = await shop.pool.fetchrow(
        "SELECT correlation_id, entity_id, state FROM events WHERE workflow_id = $1", child_id)
    assert dict(row) == {"correlation_id": event.event_id,
                         "entity_id": event.payload["customer_id"], "state": "SUCCEEDED"}


async def test_a_redelivered_order_makes_no_second_child_and_no_second_message(
        shop: Shop) -> None:
    event = new_order(shop)
    await publish_event(shop.client, shop.queue, event)
    child_id = (await fanned_out(shop.client, event.event_id))["notify"][1]
    assert child_id is not None
    handle: Handle = shop.client.get_workflow_handle(child_id, result_type=FinalOutcome)
    await approve(shop, handle, await wait_review(handle))
    assert (await result_of(shop, handle)).state == EventState.SUCCEEDED

    # The broker redelivers the order: the fan-out's id makes it a duplicate.
    assert await publish_event(shop.client, shop.queue, event) == "duplicate"
    # An operator starts the notify consumer again by hand (its dead letter's replay plan):
    # the child's business key finds the run that already sent.
    subs = load_subscriptions()
    notify = next(s for s in subs.subscriptions if s.consumer == "notify")
    again = await shop.client.execute_workflow(
        ConsumeEventWorkflow.run, ConsumeRequest(event=event, subscription=notify,
                                                 subscriptions_version=subs.version),
        id=f"{consume_id(event.event_id, 'notify')}/replay", task_queue=shop.queue)
    assert (again.status, again.workflow_id) == ("duplicate", child_id)
    assert len(messages_to(shop, event)) == 1
    assert await shop.pool.fetchval(
        "SELECT count(*) FROM events WHERE correlation_id = $1", event.event_id) == 1
    assert await shop.pool.fetchval(
        "SELECT count(*) FROM receipts WHERE event_id = $1", f"{event.event_id}.notify") == 1


async def test_analytics_stuck_holds_neither_the_review_nor_the_send(shop: Shop) -> None:
    stuck = shop.consumers["analytics"] = Stuck()
    event = new_order(shop, first_name="Minh")
    await publish_event(shop.client, shop.queue, event)
    await within(stuck.entered.wait(), 30)
    handle: Handle = shop.client.get_workflow_handle(
        CHILD_ID.format(event_id=event.event_id), result_type=FinalOutcome)
    # Analytics entering its delivery says nothing of notify's progress: the child may not
    # exist yet (NOT_FOUND), so wait for it before asking for its review.
    await eventually(handle.describe, "the confirmation's run started", ignoring=(RPCError,))
    ticket = await wait_review(handle)
    assert (await approve(shop, handle, ticket)).accepted
    assert (await handle.result()).state == EventState.SUCCEEDED
    assert len(messages_to(shop, event)) == 1
    # All of that while analytics was still inside its delivery.
    analytics = await shop.client.get_workflow_handle(
        consume_id(event.event_id, "analytics")).describe()
    assert analytics.raw_description.workflow_execution_info.status == \
        WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING
    stuck.release.set()
    assert (await fanned_out(shop.client, event.event_id))["analytics"] == ("delivered", None)


async def test_an_order_the_control_core_cannot_take_dead_letters_for_notify_alone(
        shop: Shop) -> None:
    """A tenant with no key on the worker: notify cannot vouch for the event, so its own dead
    letter says why; inventory is delivered and no child is started."""
    event = new_order(shop).model_copy(update={"tenant_id": "initech"})
    await publish_event(shop.client, shop.queue, event)
    assert await fanned_out(shop.client, event.event_id) == {
        "inventory": ("delivered", None), "notify": ("dead_lettered", None),
        "analytics": ("dead_lettered", None)}
    letters = await FanOutStore(shop.pool).dead_letters(event.event_id)
    assert "unknown_tenant" in letters["notify"] and "consumer_down" in letters["analytics"]
    assert await shop.pool.fetchval(
        "SELECT retry_state FROM consumer_dead_letters WHERE event_id = $1 AND consumer = $2",
        event.event_id, "notify") == "non_retryable_failure"
    assert await shop.pool.fetchval(
        "SELECT count(*) FROM events WHERE correlation_id = $1", event.event_id) == 0


async def test_two_orders_of_one_customer_out_of_order_each_get_their_confirmation(
        shop: Shop) -> None:
    """The newer order arrives first; the older one is still confirmed (not SUPERSEDED as a
    care reminder would be): orders never replace one another (policy 2026-12-02.3)."""
    older = new_order(shop)
    newer = new_order(shop).model_copy(update={
        "payload": {**older.payload, "order_id": "O-newer"},
        "occurred_at": older.occurred_at + timedelta(minutes=1)})
    for event in (newer, older):
        await publish_event(shop.client, shop.queue, event)
        assert (await fanned_out(shop.client, event.event_id))["notify"][0] == "handed_over"
    for event in (newer, older):
        handle: Handle = shop.client.get_workflow_handle(
            CHILD_ID.format(event_id=event.event_id), result_type=FinalOutcome)
        ticket = await wait_review(handle)
        assert event.payload["order_id"] in ticket["draft"]["message"]
