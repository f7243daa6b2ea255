"""A consumer's dead letter on the broker (aio-pika): ``<consumer>.<event>.dlq``, e.g.
``notify.order.placed.dlq``, bound to the direct exchange ``tollgate.consumers.dlx`` by its own
name (docs/fan-out.md, "Broker"; names in ``contracts.bus``).

The PostgreSQL row (``consumer_dead_letters``) is written first and stays the record; this copy
is for the people who watch the broker, and carries what they need to look and replay: the bus
event as it was published, the consumer, why its retries stopped and the reason. Published with
a confirm, so a returned call means the broker holds it; a lost confirm can leave a second copy
after the activity's retry, with the same message id ``{event_id}/{consumer}``.
"""

from __future__ import annotations

import aio_pika
from aio_pika.abc import AbstractChannel, AbstractRobustConnection

from contracts.bus import (
    CONSUMER_DEAD_LETTER_EXCHANGE,
    CONSUMER_HEADER,
    REASON_HEADER,
    RETRY_STATE_HEADER,
    dead_letter_queue,
)
from contracts.errors import RetryableError
from contracts.fanout import BusinessEvent


class RabbitConsumerDeadLetters:
    """Connects on first use (a worker whose consumers never fail opens nothing)."""

    def __init__(self, url: str, *, exchange: str = CONSUMER_DEAD_LETTER_EXCHANGE) -> None:
        self._url = url
        self._exchange_name = exchange
        self._connection: AbstractRobustConnection | None = None
        self._channel: AbstractChannel | None = None
        self._declared: set[str] = set()

    async def dead_letter(self, event: BusinessEvent, consumer: str, retry_state: str,
                          reason: str) -> None:
        queue = dead_letter_queue(consumer, event.event_type)
        try:
            channel = await self._open()
            exchange = await channel.declare_exchange(
                self._exchange_name, aio_pika.ExchangeType.DIRECT, durable=True)
            if queue not in self._declared:
                declared = await channel.declare_queue(queue, durable=True)
                await declared.bind(exchange, routing_key=queue)
                self._declared.add(queue)
            await exchange.publish(
                aio_pika.Message(event.model_dump_json().encode(),
                                 message_id=f"{event.event_id}/{consumer}",
                                 content_type="application/json",
                                 headers={REASON_HEADER: reason[:300], CONSUMER_HEADER: consumer,
                                          RETRY_STATE_HEADER: retry_state},
                                 delivery_mode=aio_pika.DeliveryMode.PERSISTENT),
                routing_key=queue)
        except (OSError, aio_pika.exceptions.AMQPError) as exc:
            raise RetryableError("broker_unreachable",
                                 f"cannot dead-letter to {queue} ({type(exc).__name__})") from None

    async def close(self) -> None:
        if self._connection is not None:
            await self._connection.close()
            self._connection = self._channel = None

    async def _open(self) -> AbstractChannel:
        if self._channel is None:
            self._connection = await aio_pika.connect_robust(self._url)
            self._channel = await self._connection.channel(publisher_confirms=True)
        return self._channel
