"""Fan-out (docs/fan-out.md): one business event delivered to every consumer subscribed to its
type, each on its own: its own child workflow, retry policy, idempotency record keyed by
(event id, consumer) and dead letters."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AwareDatetime, Field

from contracts.base import EventType, Frozen, Identifier

#: The order event of seed 002; its notify consumer hands it to the control core, whose policy
#: rule for it is the order confirmation's (policies/versions/, from 2026-12-02.2).
ORDER_PLACED = "ORDER_PLACED"


class BusinessEvent(Frozen):
    """A producer's event as the bus carries it (schemas in contracts/schemas/)."""

    event_id: Identifier
    event_type: EventType
    schema_version: Annotated[int, Field(ge=1, le=1000)]
    tenant_id: Identifier
    occurred_at: AwareDatetime
    payload: dict[str, Any]


class OrderLine(Frozen):
    sku: Identifier
    quantity: Annotated[int, Field(ge=1, le=10_000)]


class OrderPlacedV1(Frozen):
    """The payload of ``ORDER_PLACED`` version 1."""

    order_id: Identifier
    customer_id: Identifier
    lines: list[OrderLine] = Field(min_length=1, max_length=200)
    total_cents: Annotated[int, Field(ge=0)]


class Subscription(Frozen):
    """One consumer's subscription and its own retry policy (from the versioned file)."""

    consumer: Identifier
    event_types: list[EventType] = Field(min_length=1)
    max_attempts: Annotated[int, Field(ge=1, le=100)] = 5
    initial_interval_s: Annotated[float, Field(gt=0, le=3600)] = 1.0
    max_interval_s: Annotated[float, Field(gt=0, le=86_400)] = 60.0
    timeout_s: Annotated[float, Field(gt=0, le=3600)] = 30.0
    #: ``consumer``: a plain consumer writing on the delivery's transaction (inventory's cache
    #: sync, analytics). ``control_core``: a customer-facing side effect, run as a child
    #: ProcessEvent (context, draft, policy, review, send with receipt) keyed by
    #: (event id, consumer) (docs/fan-out.md, "Consumers that act").
    through: Literal["consumer", "control_core"] = "consumer"


class SubscriptionSet(Frozen):
    version: str
    subscriptions: list[Subscription]


class FanOutRequest(Frozen):
    """The event and the subscription snapshot it is fanned out by (recorded in history, so a
    replay sees the consumers the first run saw)."""

    event: BusinessEvent
    subscriptions: SubscriptionSet


class ConsumeRequest(Frozen):
    event: BusinessEvent
    subscription: Subscription
    subscriptions_version: str


class DeadLetterRequest(Frozen):
    event: BusinessEvent
    consumer: str
    #: why the retries stopped: ``maximum_attempts_reached``, ``non_retryable_failure``, ...
    retry_state: str
    error: str


class ConsumeResult(Frozen):
    consumer: str
    #: delivered: done now; duplicate: this (event, consumer) was already done, nothing written;
    #: dead_lettered: retries exhausted, one dead letter row for this consumer only;
    #: handed_over: a control-core consumer's child ProcessEvent started (``workflow_id``), which
    #: goes on by itself (review, send, receipt); duplicate there: that child already existed.
    status: Literal["delivered", "duplicate", "dead_lettered", "handed_over"]
    error: str | None = None
    workflow_id: str | None = None


class FanOutResult(Frozen):
    event_id: str
    subscriptions_version: str
    results: list[ConsumeResult]
