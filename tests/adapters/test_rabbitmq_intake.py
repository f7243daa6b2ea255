"""RabbitMQ as a producer, against a real broker (Debian's rabbitmq-server) and the
time-skipping Temporal server: a message becomes one fan-out run, acked only after the start is
durable; a redelivery is a duplicate, never a second run; poison goes to the dead-letter
exchange with its reason."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime

import asyncpg
import pytest
from cloudevents.core.bindings import rabbitmq as ce_rabbitmq
from cloudevents.core.formats.json import JSONFormat
from cloudevents.core.v1.event import CloudEvent
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from activities.consumer_intake import ConsumerIntakeActivities
from activities.fanout import FanOutActivities
from adapters.broker.rabbitmq import EVENTS_QUEUE, Inbound, Outcome, RabbitIntake
from adapters.postgres.fanout import FanOutStore
from adapters.postgres.order_consumers import order_consumers
from tests.conftest import fresh_key
from tests.eventually import eventually
from tollgate.intake.broker import event_handler
from tollgate.observability import tracing
from workflows.fan_out import ConsumeEventWorkflow, FanOutWorkflow


@pytest.fixture
async def intake(amqp_url: str) -> AsyncIterator[RabbitIntake]:
    queue = f"{EVENTS_QUEUE}.{uuid.uuid4().hex[:6]}"
    rabbit = RabbitIntake(amqp_url, queue=queue, requeue_pause_s=0.05)
    await rabbit.connect()
    await rabbit.dead_letters()  # start from an empty dead-letter queue
    yield rabbit
    await rabbit.close()


@pytest.fixture
async def task_queue(env: WorkflowEnvironment, pool: asyncpg.Pool) -> AsyncIterator[str]:
    queue = f"tq-{uuid.uuid4().hex[:8]}"
    acts = FanOutActivities(FanOutStore(pool), dict(order_consumers()))
    # No tenant keys here: the notify consumer, which hands its order to the control core
    # (tests/workflows/test_fan_out_confirmation.py), dead-letters it alone as unknown_tenant.
    hand_over = ConsumerIntakeActivities({})
    async with Worker(env.client, task_queue=queue,
                      workflows=[FanOutWorkflow, ConsumeEventWorkflow],
                      activities=[acts.deliver_event, acts.dead_letter_event,
                                  hand_over.control_core_event]):
        yield queue


def order_body() -> tuple[str, bytes]:
    event_id = fresh_key("e")
    return event_id, json.dumps({
        "event_id": event_id, "event_type": "ORDER_PLACED", "schema_version": 1,
        "tenant_id": "shop", "occurred_at": datetime.now(UTC).isoformat(),
        "payload": {"order_id": f"O-{event_id}", "customer_id": "C-1",
                    "lines": [{"sku": "SKU-9", "quantity": 1}], "total_cents": 500}}).encode()


async def run_until(intake: RabbitIntake, handler: Callable[[Inbound], Awaitable[Outcome]],
                    done: Callable[[], Awaitable[bool]]) -> None:
    task = asyncio.create_task(intake.consume(handler))
    try:
        await eventually(done, "the consumer getting there", timeout=20)
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


async def test_a_redelivered_message_is_a_duplicate_never_a_second_run(
        intake: RabbitIntake, env: WorkflowEnvironment, task_queue: str,
        pool: asyncpg.Pool) -> None:
    real = event_handler(env.client, task_queue)
    outcomes: list[str] = []

    async def crash_before_the_first_ack(message: Inbound) -> Outcome:
        outcome = await real(message)  # the start is durable here...
        outcomes.append(outcome)
        if len(outcomes) == 1:
            raise ConnectionResetError("worker died before the ack")  # ...the ack is lost
        return outcome

    event_id, body = order_body()
    await intake.publish(body, event_id)
    await run_until(intake, crash_before_the_first_ack, lambda: _true(len(outcomes) >= 2))
    assert outcomes == ["accepted", "duplicate"]
    handle = env.client.get_workflow_handle(f"fan-out/{event_id}")
    await handle.result()
    assert await pool.fetchval("SELECT count(*) FROM inventory_reservations WHERE event_id = $1",
                               event_id) == 1
    assert await intake.dead_letters() == []


async def test_poison_goes_to_the_dead_letter_exchange_with_its_reason(
        intake: RabbitIntake, env: WorkflowEnvironment, task_queue: str) -> None:
    handler = event_handler(env.client, task_queue)
    _, good = order_body()
    bad_event = json.dumps({"event_id": "e-1", "event_type": "order placed"}).encode()
    for n, body in enumerate([b"{not json", bad_event, good]):
        await intake.publish(body, f"m-{n}")
    letters: list[tuple[bytes, str]] = []

    async def two_dead_letters() -> bool:
        letters.extend(await intake.dead_letters())
        return len(letters) >= 2

    await run_until(intake, handler, two_dead_letters)
    assert sorted(reason.split(":")[0] for _, reason in letters) == ["bad_event", "not_json"]
    assert any("event_type" in reason for _, reason in letters)


async def test_hostile_text_is_dead_lettered_naming_the_rule_and_the_field(
        intake: RabbitIntake, env: WorkflowEnvironment, task_queue: str) -> None:
    """The edge rules run before the model (issue 25): no such text reaches a workflow."""
    handler = event_handler(env.client, task_queue)
    event_id, good = order_body()
    nul = good.replace(b'"customer_id": "C-1"', b'"customer_id": "C-\\u0000"')
    surrogate = good.replace(f'"{event_id}"'.encode(), b'"e-\\ud800"', 1)
    deep = good.replace(b'"lines": [', b'"lines": ' + b"[" * 2000 + b"[", 1).replace(
        b"], \"total_cents\"", b"]" * 2001 + b', "total_cents"', 1)
    for n, body in enumerate([nul, surrogate, deep]):
        await intake.publish(body, f"h-{n}")
    letters: list[tuple[bytes, str]] = []

    async def three_dead_letters() -> bool:
        letters.extend(await intake.dead_letters())
        return len(letters) >= 3

    await run_until(intake, handler, three_dead_letters)
    assert sorted(reason for _, reason in letters) == [
        "lone_surrogate: $.event_id: contains a lone UTF-16 surrogate (not a character)",
        "nul: $.payload.customer_id: contains a NUL character",
        "too_deep: $: nested deeper than 32 levels"]
    with pytest.raises(RPCError) as missing:  # the NUL and the deep one carry this id
        await env.client.get_workflow_handle(f"fan-out/{event_id}").describe()
    assert missing.value.status == RPCStatusCode.NOT_FOUND


async def _true(value: bool) -> bool:
    return value


def order_cloud_event(event_id: str) -> CloudEvent:
    _, body = order_body()
    return CloudEvent({"id": event_id, "source": "/shop", "type": "ORDER_PLACED",
                       "time": datetime.now(UTC), "schemaversion": "1", "tenant": "shop",
                       "datacontenttype": "application/json"}, json.loads(body)["payload"])


async def test_cloudevents_in_both_modes_become_fan_out_runs(
        intake: RabbitIntake, env: WorkflowEnvironment, task_queue: str) -> None:
    structured_id, binary_id = (fresh_key("ce") for _ in range(2))
    structured = ce_rabbitmq.to_structured(order_cloud_event(structured_id), JSONFormat())
    binary = ce_rabbitmq.to_binary(order_cloud_event(binary_id), JSONFormat())
    assert "ce-id" in binary.headers
    for event_id, message in ((structured_id, structured), (binary_id, binary)):
        await intake.publish(message.body, event_id, headers=message.headers,
                             content_type=message.content_type)
    handler = event_handler(env.client, task_queue)
    outcomes: list[str] = []

    async def counted(message: Inbound) -> Outcome:
        outcomes.append(await handler(message))
        return outcomes[-1]

    await run_until(intake, counted, lambda: _true(len(outcomes) >= 2))
    for event_id in (structured_id, binary_id):
        await env.client.get_workflow_handle(f"fan-out/{event_id}").result()
    assert await intake.dead_letters() == []


async def test_an_incomplete_cloudevent_is_dead_lettered_with_its_reason(
        intake: RabbitIntake, env: WorkflowEnvironment, task_queue: str) -> None:
    binary = ce_rabbitmq.to_binary(order_cloud_event("ce-x1"), JSONFormat())
    no_tenant = {k: v for k, v in binary.headers.items() if k != "ce-tenant"}
    no_time = {k: v for k, v in binary.headers.items() if k != "ce-time"}
    for n, headers in enumerate((no_tenant, no_time)):
        await intake.publish(binary.body, f"m-{n}", headers=headers,
                             content_type=binary.content_type)
    letters: list[tuple[bytes, str]] = []

    async def two_dead_letters() -> bool:
        letters.extend(await intake.dead_letters())
        return len(letters) >= 2

    await run_until(intake, event_handler(env.client, task_queue), two_dead_letters)
    reasons = sorted(reason for _, reason in letters)
    assert all(r.startswith("cloudevent_incomplete:") for r in reasons), reasons
    assert any("tenant" in r for r in reasons) and any("time" in r for r in reasons)


async def test_a_schemaversion_int_refuses_is_dead_lettered_not_requeued_for_ever(
        intake: RabbitIntake, env: WorkflowEnvironment, task_queue: str) -> None:
    """``²`` passes ``str.isdigit`` and ``int()`` refuses it: the ValueError was taken for an
    outage, so the message was given back and redelivered for ever."""
    binary = ce_rabbitmq.to_binary(order_cloud_event(fresh_key("ce")), JSONFormat())
    await intake.publish(binary.body, "m-0", content_type=binary.content_type,
                         headers={**binary.headers, "ce-schemaversion": "\u00b2"})
    letters: list[tuple[bytes, str]] = []

    async def dead_lettered() -> bool:
        letters.extend(await intake.dead_letters())
        return len(letters) >= 1

    await run_until(intake, event_handler(env.client, task_queue), dead_lettered)
    assert [reason.split(":")[0] for _, reason in letters] == ["bad_event"]
    assert "schema_version" in letters[0][1]


PRODUCER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


async def test_a_delivery_is_a_messaging_span_in_the_producers_trace(
        intake: RabbitIntake, env: WorkflowEnvironment, task_queue: str,
        spans: InMemorySpanExporter) -> None:
    """Issue 29 item 7: the messaging conventions' attributes; the fan-out start is a child."""
    traced = Client(**{**env.client.config(), "interceptors": tracing.interceptors()})
    event_id, body = order_body()
    await intake.publish(body, event_id,
                         headers={"traceparent": f"00-{PRODUCER_TRACE}-00f067aa0ba902b7-01"})
    await intake.publish(b"{not json", "lan.nguyen@example.com")
    letters: list[tuple[bytes, str]] = []

    async def handled() -> bool:
        letters.extend(await intake.dead_letters())
        names = [s.name for s in spans.get_finished_spans()]
        return bool(letters) and names.count(f"process {intake_queue(intake)}") >= 2

    await run_until(intake, event_handler(traced, task_queue), handled)

    finished = list(spans.get_finished_spans())
    processed = [s for s in finished if s.name.startswith("process ")]
    [good] = [s for s in processed if not (s.attributes or {}).get("error.type")]
    [poison] = [s for s in processed if (s.attributes or {}).get("error.type")]
    queue = intake_queue(intake)
    attributes = dict(good.attributes or {})
    assert isinstance(attributes.pop("messaging.rabbitmq.message.delivery_tag"), int)
    assert attributes == {
        "messaging.system": "rabbitmq", "messaging.operation.type": "process",
        "messaging.operation.name": "process", "messaging.destination.name": "",
        "messaging.rabbitmq.destination.routing_key": queue,
        "messaging.destination.subscription.name": queue,
        "messaging.message.id": event_id, "messaging.message.body.size": len(body),
        "tollgate.intake.outcome": "accepted"}
    assert good.kind.name == "CONSUMER"
    # The producer's traceparent is continued, and the fan-out start is the delivery's child.
    assert good.context.trace_id == int(PRODUCER_TRACE, 16)
    assert good.parent is not None and good.parent.span_id == 0x00f067aa0ba902b7
    [start] = [s for s in finished if s.name == "StartWorkflow:FanOutWorkflow"]
    assert start.parent is not None and start.parent.span_id == good.context.span_id
    # Poison: its rule as error.type; an e-mail as the message id never becomes an attribute.
    assert (poison.attributes or {})["error.type"] == "not_json"
    assert poison.status.status_code.name == "ERROR"
    assert "messaging.message.id" not in (poison.attributes or {})
    text = repr([(dict(s.attributes or {}), s.status.description) for s in finished])
    assert "lan.nguyen" not in text and "SKU-9" not in text and "not json" not in text


def intake_queue(intake: RabbitIntake) -> str:
    return intake._queue_name
