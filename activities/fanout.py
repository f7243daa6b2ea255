"""Fan-out activities: deliver one event to one consumer, or dead-letter it for that consumer.
Errors map to the taxonomy (``InvalidInput`` for a payload the consumer cannot read is final;
``consumer_down`` is retried by the consumer's own policy). With a bus (``TOLLGATE_AMQP_URL``)
a dead letter is also put on the consumer's own queue, ``<consumer>.<event>.dlq``, after its
PostgreSQL row, which is the record (a retry finds the row and publishes again)."""

from __future__ import annotations

import structlog
from temporalio import activity

from activities.errors import to_application_error
from adapters.ports.bus import ConsumerDeadLetters
from adapters.ports.stores.fanout import EventConsumer, FanOutLedger
from contracts.errors import InvalidInput, TollgateError
from contracts.fanout import ConsumeRequest, ConsumeResult, DeadLetterRequest

log = structlog.get_logger("tollgate.fanout")


class FanOutActivities:
    def __init__(self, store: FanOutLedger, consumers: dict[str, EventConsumer],
                 bus: ConsumerDeadLetters | None = None) -> None:
        self._store = store
        self._consumers = consumers
        self._bus = bus

    @activity.defn
    async def deliver_event(self, request: ConsumeRequest) -> ConsumeResult:
        name = request.subscription.consumer
        attempt = activity.info().attempt
        fields: dict[str, object] = {}
        try:
            consumer = self._consumers.get(name)
            if consumer is None:
                raise InvalidInput("unknown_consumer", f"no consumer named {name} here")
            status = await self._store.deliver(request.event, consumer, attempt)
            fields["status"] = status
            return ConsumeResult(consumer=name, status=status)
        except TollgateError as exc:
            fields.update(status="error", error_class=exc.error_class.value,
                          error_code=exc.code)
            raise to_application_error(exc) from None
        finally:
            log.info("deliver_event", event_id=request.event.event_id, consumer=name,
                     attempt=attempt, **fields)

    @activity.defn
    async def dead_letter_event(self, request: DeadLetterRequest) -> ConsumeResult:
        await self._store.dead_letter(request.event, request.consumer, request.retry_state,
                                      request.error)
        if self._bus is not None:
            try:
                await self._bus.dead_letter(request.event, request.consumer,
                                            request.retry_state, request.error)
            except TollgateError as exc:
                raise to_application_error(exc) from None
        log.warning("dead_letter_event", event_id=request.event.event_id,
                    consumer=request.consumer, retry_state=request.retry_state)
        return ConsumeResult(consumer=request.consumer, status="dead_lettered",
                             error=request.error)
