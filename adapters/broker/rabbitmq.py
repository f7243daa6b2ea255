"""RabbitMQ as a producer of business events (aio-pika), docs/fan-out.md "Broker".

    producer --order.placed--> exchange tollgate.bus (topic) --#--> queue tollgate.events
    queue tollgate.events  --handler ok (start durable)-->  ack
                           --InvalidInput (poison)----->  publish to tollgate.events.dlx with
                                                          x-tollgate-reason, confirmed, then ack
                           --anything else------------->  nack + requeue after a pause

Acks are manual and come only after the handler returned, i.e. after the workflow start is
durable: a crash before the ack redelivers the message, and the workflow id turns the redelivery
into a duplicate, never a second run. The dead-letter exchange is also the queue's own
``x-dead-letter-exchange``, so a message the broker itself gives up on lands in the same place.
The consumers' own dead-letter queues (``<consumer>.<event>.dlq`` on ``tollgate.consumers.dlx``,
names in ``contracts.bus``) are declared here too, so they exist before the first failure.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import aio_pika
from aio_pika.abc import AbstractChannel, AbstractIncomingMessage, AbstractRobustConnection

from adapters.broker.cancel import raise_if_cancel_pending, raise_if_cancelled
from contracts.bus import CONSUMER_DEAD_LETTER_EXCHANGE, EVENTS_EXCHANGE
from contracts.errors import InvalidInput, RetryableError

EVENTS_QUEUE = "tollgate.events"
DEAD_LETTER_EXCHANGE = "tollgate.events.dlx"
DEAD_LETTER_QUEUE = "tollgate.events.dead"
REASON_HEADER = "x-tollgate-reason"

Outcome = Literal["accepted", "duplicate"]


@dataclass(frozen=True)
class Inbound:
    """One delivered message as a handler sees it: a CloudEvent in binary mode is in the
    headers (``ce-*``) as much as in the body. Where it came from (exchange, routing key,
    queue, the producer's message id, the delivery tag) is for the intake's trace span."""

    body: bytes
    headers: Mapping[str, Any] = field(default_factory=dict)
    content_type: str | None = None
    message_id: str | None = None
    exchange: str = ""
    routing_key: str | None = None
    queue: str | None = None
    delivery_tag: int | None = None


#: Turns one message into a durable workflow start; raises ``InvalidInput`` for poison.
Handler = Callable[[Inbound], Awaitable[Outcome]]


class RabbitIntake:
    def __init__(self, url: str, *, queue: str = EVENTS_QUEUE, prefetch: int = 16,
                 requeue_pause_s: float = 1.0, exchange: str = EVENTS_EXCHANGE) -> None:
        self._url = url
        self._queue_name = queue
        self._exchange_name = exchange
        self._prefetch = prefetch
        self._pause = requeue_pause_s
        self._connection: AbstractRobustConnection | None = None
        self._channel: AbstractChannel | None = None

    async def connect(self, consumer_dead_letter_queues: tuple[str, ...] = ()) -> None:
        """Connect and declare the topology (idempotent: every consumer may declare it): the
        events exchange bound to the intake queue for every routing key, and the consumers'
        dead-letter queues named (``contracts.bus.dead_letter_queue``)."""
        try:
            self._connection = await aio_pika.connect_robust(self._url)
        except (OSError, aio_pika.exceptions.AMQPError) as exc:
            raise RetryableError("broker_unreachable",
                                 f"cannot connect to RabbitMQ ({type(exc).__name__})") from None
        self._channel = await self._connection.channel(publisher_confirms=True)
        await self._channel.set_qos(prefetch_count=self._prefetch)
        dlx = await self._channel.declare_exchange(
            DEAD_LETTER_EXCHANGE, aio_pika.ExchangeType.FANOUT, durable=True)
        dead = await self._channel.declare_queue(DEAD_LETTER_QUEUE, durable=True)
        await dead.bind(dlx)
        intake = await self._channel.declare_queue(
            self._queue_name, durable=True,
            arguments={"x-dead-letter-exchange": DEAD_LETTER_EXCHANGE})
        events = await self._channel.declare_exchange(
            self._exchange_name, aio_pika.ExchangeType.TOPIC, durable=True)
        await intake.bind(events, routing_key="#")
        consumers_dlx = await self._channel.declare_exchange(
            CONSUMER_DEAD_LETTER_EXCHANGE, aio_pika.ExchangeType.DIRECT, durable=True)
        for name in consumer_dead_letter_queues:
            queue = await self._channel.declare_queue(name, durable=True)
            await queue.bind(consumers_dlx, routing_key=name)

    async def close(self) -> None:
        if self._connection is not None:
            await self._connection.close()

    async def publish(self, body: bytes, message_id: str, *,
                      headers: Mapping[str, str] | None = None,
                      content_type: str | None = "application/json") -> None:
        """Publish one persistent message (what a producer does; tests and the demo use it)."""
        channel = self._require()
        await channel.default_exchange.publish(
            aio_pika.Message(body, message_id=message_id, content_type=content_type,
                             headers=dict(headers or {}),
                             delivery_mode=aio_pika.DeliveryMode.PERSISTENT),
            routing_key=self._queue_name)

    async def publish_event(self, body: bytes, message_id: str, routing_key: str) -> None:
        """What a producer does by seed 002's naming: publish on the events exchange under the
        event's routing key (``contracts.bus.routing_key``: ``order.placed``), confirmed."""
        exchange = await self._require().get_exchange(self._exchange_name)
        await exchange.publish(
            aio_pika.Message(body, message_id=message_id, content_type="application/json",
                             delivery_mode=aio_pika.DeliveryMode.PERSISTENT),
            routing_key=routing_key)

    async def consume(self, handler: Handler, *, stop: asyncio.Event | None = None) -> None:
        """Hand each message to ``handler`` until ``stop`` is set (or forever)."""
        queue = await self._require().get_queue(self._queue_name)
        async with queue.iterator() as messages:
            async for message in messages:
                await self._one(message, handler)
                raise_if_cancel_pending()  # a cancel the handler's libraries swallowed
                if stop is not None and stop.is_set():
                    return

    async def dead_letters(self) -> list[tuple[bytes, str]]:
        """Drain the dead-letter queue: (body, reason) of each message (tests, operators)."""
        queue = await self._require().get_queue(DEAD_LETTER_QUEUE)
        out: list[tuple[bytes, str]] = []
        while (message := await queue.get(no_ack=False, fail=False)) is not None:
            out.append((message.body, str((message.headers or {}).get(REASON_HEADER, ""))))
            await message.ack()
        return out

    async def _one(self, message: AbstractIncomingMessage, handler: Handler) -> None:
        try:
            await handler(Inbound(
                message.body, dict(message.headers or {}), message.content_type,
                message_id=message.message_id, exchange=message.exchange or "",
                routing_key=message.routing_key, queue=self._queue_name,
                delivery_tag=message.delivery_tag))
        except InvalidInput as exc:
            await self._dead_letter(message, f"{exc.code}: {exc.message}"[:300])
            await message.ack()
            return
        except Exception as exc:
            # Not known durable (Temporal down, a timeout): give it back and pause, so one
            # message does not spin the loop while the cluster recovers. A cancel of this
            # consumer gives it back too, then ends the consumer.
            await message.nack(requeue=True)
            raise_if_cancelled(exc)
            await asyncio.sleep(self._pause)
            return
        await message.ack()

    async def _dead_letter(self, message: AbstractIncomingMessage, reason: str) -> None:
        """Our own publish (confirmed) so the reason travels with it; then the caller acks."""
        exchange = await self._require().get_exchange(DEAD_LETTER_EXCHANGE)
        headers = dict(message.headers or {})
        headers[REASON_HEADER] = reason
        await exchange.publish(
            aio_pika.Message(message.body, headers=headers, message_id=message.message_id,
                             content_type=message.content_type,
                             delivery_mode=aio_pika.DeliveryMode.PERSISTENT),
            routing_key="")

    def _require(self) -> AbstractChannel:
        if self._channel is None:
            raise RuntimeError("call connect() first")
        return self._channel
