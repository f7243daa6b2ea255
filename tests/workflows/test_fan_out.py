"""One ORDER_PLACED fanned out to its consumers on the time-skipping server with the real
store: each consumer has its own child, retries, idempotency record and dead letter; one down
delays no other and never the producer; a redelivered event is a duplicate.

These are the plain consumers' tests, so they fan out by the 2026-12-01 subscriptions, where
all three consumers are plain; the consumer that acts through the control core (notify, from
2026-12-02) is tests/workflows/test_fan_out_confirmation.py's."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import asyncpg
import pytest
from asyncpg.pool import PoolConnectionProxy
from temporalio.api.testservice.v1 import LockTimeSkippingRequest, UnlockTimeSkippingRequest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from activities.fanout import FanOutActivities
from adapters.ports.stores.fanout import EventConsumer
from adapters.postgres.fanout import FanOutStore
from adapters.postgres.order_consumers import order_consumers
from contracts.fanout import (
    BusinessEvent,
    ConsumeRequest,
    FanOutResult,
    Subscription,
    SubscriptionSet,
)
from policies.keys import fan_out_id
from policies.subscriptions import load_subscriptions, newest_subscriptions_file
from tests.conftest import fresh_key
from tollgate.intake.publish import publish_event
from workflows.fan_out import ConsumeEventWorkflow, FanOutWorkflow

#: Every consumer plain: inventory, notification (records the request), analytics.
PLAIN = load_subscriptions(newest_subscriptions_file().parent / "2026-12-01.json")


class Flaky:
    """Wraps a consumer: refuses the first ``failures`` deliveries, then is back."""

    def __init__(self, inner: EventConsumer, failures: int) -> None:
        self.inner, self.failures, self.calls = inner, failures, 0
        self.name, self.down = inner.name, False

    async def apply(self, conn: PoolConnectionProxy, event: BusinessEvent) -> None:
        self.calls += 1
        if self.calls <= self.failures:
            self.inner.down = True
        try:
            await self.inner.apply(conn, event)
        finally:
            self.inner.down = False


@pytest.fixture
async def bus(env: WorkflowEnvironment, pool: asyncpg.Pool
              ) -> AsyncIterator[tuple[Client, str, dict[str, Any]]]:
    queue = f"tq-{uuid.uuid4().hex[:8]}"
    consumers: dict[str, Any] = dict(order_consumers())
    activities = FanOutActivities(FanOutStore(pool), consumers)
    async with Worker(env.client, task_queue=queue,
                      workflows=[FanOutWorkflow, ConsumeEventWorkflow],
                      activities=[activities.deliver_event, activities.dead_letter_event]):
        yield env.client, queue, consumers


def order(**payload: Any) -> BusinessEvent:
    body = {"order_id": f"O-{uuid.uuid4().hex[:8]}", "customer_id": "C-1",
            "lines": [{"sku": "SKU-1", "quantity": 2}], "total_cents": 1990, **payload}
    return BusinessEvent(event_id=fresh_key("e"), event_type="ORDER_PLACED",
                         schema_version=1, tenant_id="shop", occurred_at=datetime.now(UTC),
                         payload=body)


async def outcome(client: Client, event_id: str) -> dict[str, str]:
    handle = client.get_workflow_handle(fan_out_id(event_id), result_type=FanOutResult)
    await client.test_service.unlock_time_skipping(UnlockTimeSkippingRequest())
    try:
        result: FanOutResult = await handle.result()
    finally:
        await client.test_service.lock_time_skipping(LockTimeSkippingRequest())
    return {r.consumer: r.status for r in result.results}


async def test_one_consumer_down_dead_letters_alone(
        bus: tuple[Client, str, dict[str, Any]], pool: asyncpg.Pool) -> None:
    client, queue, consumers = bus
    consumers["analytics"].down = True
    event = order()
    assert await publish_event(client, queue, event, PLAIN) == "accepted"
    assert await outcome(client, event.event_id) == {
        "inventory": "delivered", "notification": "delivered", "analytics": "dead_lettered"}
    store = FanOutStore(pool)
    assert await store.delivered(event.event_id) == ["inventory", "notification"]
    letters = await store.dead_letters(event.event_id)
    assert list(letters) == ["analytics"] and "consumer_down" in letters["analytics"]
    assert await pool.fetchval("SELECT quantity FROM inventory_reservations WHERE order_id = $1",
                               event.payload["order_id"]) == 2


async def test_a_consumer_down_and_back_is_delivered_once(
        bus: tuple[Client, str, dict[str, Any]], pool: asyncpg.Pool) -> None:
    client, queue, consumers = bus
    flaky = consumers["inventory"] = Flaky(consumers["inventory"], failures=3)
    event = order()
    await publish_event(client, queue, event, PLAIN)
    assert (await outcome(client, event.event_id))["inventory"] == "delivered"
    assert flaky.calls == 4
    assert await FanOutStore(pool).dead_letters(event.event_id) == {}


async def test_a_redelivered_event_is_a_duplicate_and_writes_nothing(
        bus: tuple[Client, str, dict[str, Any]], pool: asyncpg.Pool) -> None:
    client, queue, _ = bus
    event = order()
    await publish_event(client, queue, event, PLAIN)
    await outcome(client, event.event_id)
    assert await publish_event(client, queue, event, PLAIN) == "duplicate"
    # Even a consumer run started again by hand (a replay) finds its record and does nothing.
    sub = PLAIN
    again = await client.execute_workflow(
        ConsumeEventWorkflow.run,
        ConsumeRequest(event=event, subscription=sub.subscriptions[0],
                       subscriptions_version=sub.version),
        id=f"replay/{event.event_id}", task_queue=queue)
    assert again.status == "duplicate"
    assert await pool.fetchval("SELECT count(*) FROM inventory_reservations WHERE order_id = $1",
                               event.payload["order_id"]) == 1


async def test_a_payload_some_consumers_cannot_read_dead_letters_for_those_consumers_only(
        bus: tuple[Client, str, dict[str, Any]]) -> None:
    client, queue, _ = bus
    event = order(lines=[])
    await publish_event(client, queue, event, PLAIN)
    assert await outcome(client, event.event_id) == {
        "inventory": "dead_lettered", "notification": "dead_lettered", "analytics": "delivered"}


async def test_a_new_consumer_needs_no_producer_change(
        bus: tuple[Client, str, dict[str, Any]]) -> None:
    client, queue, consumers = bus
    current = PLAIN
    consumers["audit"] = consumers["analytics"].__class__()
    consumers["audit"].name = "audit"
    wider = SubscriptionSet(version="test-wider", subscriptions=[
        *current.subscriptions, Subscription(consumer="audit", event_types=["ORDER_PLACED"])])
    event = order()
    await publish_event(client, queue, event, wider)
    assert set(await outcome(client, event.event_id)) == {
        "inventory", "notification", "analytics", "audit"}
