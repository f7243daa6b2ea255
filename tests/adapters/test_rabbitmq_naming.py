"""Seed 002's naming on the RabbitMQ side (issue 30 item 5), against a real broker (Debian's
rabbitmq-server) and the time-skipping Temporal server: a producer publishes ORDER_PLACED under
the routing key ``order.placed`` on the events exchange, the intake declares and reads it; each
consumer that gives up dead-letters on its own ``<consumer>.<event>.dlq`` queue, beside its
PostgreSQL row, and the consumers that did not fail leave theirs empty."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import aio_pika
import asyncpg
import pytest
from temporalio.service import RPCError
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from activities.consumer_intake import ConsumerIntakeActivities
from activities.fanout import FanOutActivities
from adapters.broker.rabbitmq import EVENTS_QUEUE, Inbound, Outcome, RabbitIntake
from adapters.broker.rabbitmq_dead_letters import RabbitConsumerDeadLetters
from adapters.postgres.fanout import FanOutStore
from adapters.postgres.order_consumers import order_consumers
from contracts.bus import (
    CONSUMER_HEADER,
    REASON_HEADER,
    RETRY_STATE_HEADER,
    dead_letter_queue,
    routing_key,
)
from policies.subscriptions import load_subscriptions
from tests.conftest import fresh_key
from tests.eventually import eventually
from tests.time_skips import skipping_result
from tollgate.intake.broker import consumer_dead_letter_queues, event_handler
from workflows.fan_out import ConsumeEventWorkflow, FanOutWorkflow

DLQS = consumer_dead_letter_queues(load_subscriptions())


def test_seed_002_names() -> None:
    assert routing_key("ORDER_PLACED") == "order.placed"
    assert routing_key("MESSAGE_RECEIVED") == "message.received"
    assert dead_letter_queue("notify", "ORDER_PLACED") == "notify.order.placed.dlq"
    assert DLQS == ("inventory.order.placed.dlq", "notify.order.placed.dlq",
                    "analytics.order.placed.dlq")


@pytest.fixture
async def intake(amqp_url: str) -> AsyncIterator[RabbitIntake]:
    tag = uuid.uuid4().hex[:6]
    rabbit = RabbitIntake(amqp_url, queue=f"{EVENTS_QUEUE}.{tag}", exchange=f"bus.{tag}",
                          requeue_pause_s=0.05)
    await rabbit.connect(DLQS)
    yield rabbit
    await rabbit.close()


async def drain(url: str, queue: str) -> list[aio_pika.abc.AbstractIncomingMessage]:
    """Every message on ``queue`` (acked); the queue must exist (passive: never declared here)."""
    connection = await aio_pika.connect_robust(url)
    try:
        channel = await connection.channel()
        declared = await channel.declare_queue(queue, passive=True)
        out = []
        while (message := await declared.get(no_ack=True, fail=False)) is not None:
            out.append(message)
        return out
    finally:
        await connection.close()


def order_body(tenant: str = "shop") -> tuple[str, bytes]:
    event_id = fresh_key("e")
    return event_id, json.dumps({
        "event_id": event_id, "event_type": "ORDER_PLACED", "schema_version": 1,
        "tenant_id": tenant, "occurred_at": datetime.now(UTC).isoformat(),
        "payload": {"order_id": f"O-{event_id}", "customer_id": "C-1",
                    "lines": [{"sku": "SKU-9", "quantity": 1}], "total_cents": 500}}).encode()


async def test_the_intake_declares_the_names_and_reads_order_placed_by_routing_key(
        intake: RabbitIntake, amqp_url: str) -> None:
    for queue in DLQS:  # declared before any consumer failed: a passive declare finds each
        assert await drain(amqp_url, queue) is not None
    event_id, body = order_body()
    await intake.publish_event(body, event_id, routing_key("ORDER_PLACED"))
    seen: list[Inbound] = []

    async def record(message: Inbound) -> Outcome:
        seen.append(message)
        return "accepted"

    task = asyncio.create_task(intake.consume(record))
    try:
        await eventually(lambda: _true(bool(seen)), "the message reaching the intake", timeout=20)
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert (seen[0].routing_key, seen[0].message_id) == ("order.placed", event_id)
    assert seen[0].exchange.startswith("bus.")


async def test_a_consumer_that_gives_up_dead_letters_on_its_own_queue(
        intake: RabbitIntake, amqp_url: str, env: WorkflowEnvironment,
        pool: asyncpg.Pool) -> None:
    """Analytics down (its retries spent) and notify unable to vouch for the order (no tenant
    key here): each lands on its own queue, with the event and why; inventory's stays empty."""
    consumers = dict(order_consumers())
    consumers["analytics"].down = True
    bus = RabbitConsumerDeadLetters(amqp_url)
    acts = FanOutActivities(FanOutStore(pool), consumers, bus)
    queue = f"tq-{uuid.uuid4().hex[:8]}"
    event_id, body = order_body()
    async with Worker(env.client, task_queue=queue,
                      workflows=[FanOutWorkflow, ConsumeEventWorkflow],
                      activities=[acts.deliver_event, acts.dead_letter_event,
                                  ConsumerIntakeActivities({}).control_core_event]):
        await intake.publish_event(body, event_id, routing_key("ORDER_PLACED"))
        task = asyncio.create_task(intake.consume(event_handler(env.client, queue)))
        handle = env.client.get_workflow_handle(f"fan-out/{event_id}")
        try:
            await eventually(handle.describe, "the intake starting the fan-out", timeout=30,
                             ignoring=(RPCError,))
            # Analytics' three attempts wait 5 s and 10 s of backoff: skipped, not waited.
            await skipping_result(env.client, handle)
        finally:
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
    await bus.close()
    letters = {name: [m for m in await drain(amqp_url, name)
                      if m.message_id and m.message_id.startswith(f"{event_id}/")]
               for name in DLQS}
    assert [len(letters[q]) for q in DLQS] == [0, 1, 1]
    (analytics,) = letters["analytics.order.placed.dlq"]
    assert analytics.message_id == f"{event_id}/analytics"
    headers = analytics.headers or {}
    assert headers[CONSUMER_HEADER] == "analytics"
    assert headers[RETRY_STATE_HEADER] == "maximum_attempts_reached"
    assert "consumer_down" in str(headers[REASON_HEADER])
    assert json.loads(analytics.body)["event_id"] == event_id  # what a replay needs
    (notify,) = letters["notify.order.placed.dlq"]
    assert "unknown_tenant" in str((notify.headers or {})[REASON_HEADER])
    rows = await pool.fetch("SELECT consumer FROM consumer_dead_letters WHERE event_id = $1",
                            event_id)
    assert sorted(r["consumer"] for r in rows) == ["analytics", "notify"]


async def _true(value: bool) -> bool:
    return value
