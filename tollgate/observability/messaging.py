"""Broker deliveries as OpenTelemetry messaging spans (docs/tracing.md, "Broker intake").

The RabbitMQ consumer (``tollgate.intake.broker``) and the Redis Streams consumer
(``tollgate.intake.redis_stream``) handle each delivery inside one ``process`` span (kind
CONSUMER) with the messaging semantic conventions' attributes. A RabbitMQ delivery's fan-out
start (temporalio's client span) sits under it; a Redis entry's ``tollgate.submit`` starts the
event's own trace (from its correlation id) and links back to the delivery's span. A producer
that sent a W3C ``traceparent`` header (or entry field) is continued: the span is its child.

Only ids and names: the exchange, routing key and queue are Tollgate's topology, the message id
is kept only when it has the shape of an id (a producer may put anything there; an e-mail or a
phone number is left out, as it is from workflow ids). Never the body, never a header's value.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from contracts.base import ID_PATTERN
from contracts.errors import TollgateError
from policies.redaction import personal_data_kind
from tollgate.observability import tracing

if TYPE_CHECKING:
    from adapters.broker.rabbitmq import Inbound
    from adapters.broker.redis_streams import StreamEntry

_ID = re.compile(ID_PATTERN)
_PROPAGATED = ("traceparent", "tracestate")


@contextmanager
def process_span(message: Inbound) -> Iterator[trace.Span]:
    """The span of handling one RabbitMQ delivery; a non-recording span while tracing is off.
    An exception marks it failed with ``error.type`` (the taxonomy code) and propagates."""
    source = message.queue or message.routing_key or message.exchange
    with _span(f"process {source}", lambda: delivery_attributes(message),
               message.headers) as span:
        yield span


@contextmanager
def stream_span(entry: StreamEntry) -> Iterator[trace.Span]:
    """The same for one Redis Streams entry (``tollgate.intake.redis_stream``)."""
    with _span(f"process {entry.stream}", lambda: entry_attributes(entry),
               {k.decode("latin-1"): v for k, v in entry.fields.items()}) as span:
        yield span


@contextmanager
def _span(name: str, attributes: Callable[[], dict[str, Any]], headers: Any
          ) -> Iterator[trace.Span]:
    tracer = tracing.tracer("tollgate.broker")
    if tracer is None:
        yield trace.INVALID_SPAN
        return
    with tracer.start_as_current_span(
        name, context=_producer_context(headers), kind=SpanKind.CONSUMER,
        attributes=attributes(), record_exception=False, set_status_on_exception=False,
    ) as span:
        try:
            yield span
        except BaseException as exc:
            kind = exc.code if isinstance(exc, TollgateError) and exc.code \
                else type(exc).__qualname__
            span.set_attribute("error.type", kind)
            span.set_status(Status(StatusCode.ERROR, kind))
            raise


def entry_attributes(entry: StreamEntry) -> dict[str, Any]:
    """Redis Streams has no name in the conventions' list of systems, so ``redis`` (a custom
    value, as they allow); the stream is the destination, the group the consumer group, the
    entry id (a time and a sequence number, chosen by Redis) the message id."""
    body = entry.fields.get(b"body")
    attributes: dict[str, Any] = {
        "messaging.system": "redis",
        "messaging.operation.type": "process",
        "messaging.operation.name": "process",
        "messaging.destination.name": entry.stream,
        "messaging.message.id": entry.entry_id,
    }
    if entry.group:
        attributes["messaging.consumer.group.name"] = entry.group
    if body is not None:
        attributes["messaging.message.body.size"] = len(body)
    return attributes


def delivery_attributes(message: Inbound) -> dict[str, Any]:
    """The conventions' names for one RabbitMQ delivery. ``messaging.destination.name`` is
    the exchange ("" for the default exchange, which our producers publish to), the routing
    key says where in it, and the queue consumed from is the subscription."""
    attributes: dict[str, Any] = {
        "messaging.system": "rabbitmq",
        "messaging.operation.type": "process",
        "messaging.operation.name": "process",
        "messaging.destination.name": message.exchange,
        "messaging.message.body.size": len(message.body),
    }
    if message.routing_key:
        attributes["messaging.rabbitmq.destination.routing_key"] = message.routing_key
    if message.queue:
        attributes["messaging.destination.subscription.name"] = message.queue
    if message.delivery_tag is not None:
        attributes["messaging.rabbitmq.message.delivery_tag"] = message.delivery_tag
    if message.message_id and _ID.fullmatch(message.message_id) \
            and not personal_data_kind(message.message_id):
        attributes["messaging.message.id"] = message.message_id
    return attributes


def _producer_context(headers: Any) -> Any:
    """The producer's trace context from W3C headers, None when it sent none."""
    carrier: dict[str, str] = {}
    for name in _PROPAGATED:
        value = headers.get(name) if hasattr(headers, "get") else None
        if isinstance(value, bytes):
            value = value.decode("ascii", "replace")
        if isinstance(value, str):
            carrier[name] = value
    return TraceContextTextMapPropagator().extract(carrier) if carrier else None
