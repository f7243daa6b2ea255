"""Seed 002's names on the RabbitMQ side (docs/fan-out.md, "Broker"), which the intake, the
publisher and the worker's dead-letter mirror must spell alike.

    routing key        {domain}.{event}          ORDER_PLACED -> order.placed
    events exchange    tollgate.bus (topic)      producers publish by routing key
    consumer DLQ       {consumer}.{routing key}.dlq      notify.order.placed.dlq
    consumer DLX       tollgate.consumers.dlx (direct, routing key = the queue's name)
"""

from __future__ import annotations

EVENTS_EXCHANGE = "tollgate.bus"
CONSUMER_DEAD_LETTER_EXCHANGE = "tollgate.consumers.dlx"
#: Headers a consumer's dead-lettered message carries (never the payload's text).
REASON_HEADER = "x-tollgate-reason"
CONSUMER_HEADER = "x-tollgate-consumer"
RETRY_STATE_HEADER = "x-tollgate-retry-state"


def routing_key(event_type: str) -> str:
    """``ORDER_PLACED`` -> ``order.placed``: the event type's words, lower case, dot-joined
    (the first word is the domain)."""
    return ".".join(part for part in event_type.lower().split("_") if part)


def dead_letter_queue(consumer: str, event_type: str) -> str:
    """``notify``, ``ORDER_PLACED`` -> ``notify.order.placed.dlq``: one queue per consumer and
    event, so one consumer's failures never mix with another's."""
    return f"{consumer}.{routing_key(event_type)}.dlq"
