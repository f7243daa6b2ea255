"""The plain consumers of ``ORDER_PLACED`` (docs/fan-out.md): inventory reserves stock (the
stock cache sync), analytics records the sale, notification (subscriptions 2026-12-01 only)
asks for a customer message. Each writes on the
connection of the delivery's transaction, so its write and the (event, consumer) idempotency
record commit together or not at all. Each matches ``adapters.ports.stores.fanout.EventConsumer``.

``down`` is the fault switch the tests and the demo flip: a down consumer raises a retryable
error before touching anything, like a service that refuses connections.
"""

from __future__ import annotations

from asyncpg.pool import PoolConnectionProxy
from pydantic import ValidationError

from adapters.ports.stores.fanout import EventConsumer
from contracts.errors import InvalidInput, RetryableError
from contracts.fanout import BusinessEvent, OrderPlacedV1


def _order(event: BusinessEvent) -> OrderPlacedV1:
    if event.event_type != "ORDER_PLACED" or event.schema_version != 1:
        raise InvalidInput("unsupported_event", f"{event.event_type} v{event.schema_version}")
    try:
        return OrderPlacedV1.model_validate(event.payload)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise InvalidInput("bad_payload", f"payload.{'.'.join(map(str, first['loc']))}: "
                           f"{first['type']}") from None


class _Consumer:
    name = "?"

    def __init__(self) -> None:
        self.down = False

    def _check(self) -> None:
        if self.down:
            raise RetryableError("consumer_down", f"{self.name} is not answering")


class InventoryConsumer(_Consumer):
    name = "inventory"

    async def apply(self, conn: PoolConnectionProxy, event: BusinessEvent) -> None:
        self._check()
        order = _order(event)
        await conn.executemany(
            "INSERT INTO inventory_reservations (event_id, order_id, sku, quantity)"
            " VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
            [(event.event_id, order.order_id, line.sku, line.quantity) for line in order.lines])


class NotificationConsumer(_Consumer):
    """Records the request for a customer message: the consumer of the 2026-12-01 subscriptions,
    kept for fan-outs started under them. From 2026-12-02 the ``notify`` consumer sends the
    confirmation through the control core instead (docs/fan-out.md, "Consumers that act")."""

    name = "notification"

    async def apply(self, conn: PoolConnectionProxy, event: BusinessEvent) -> None:
        self._check()
        order = _order(event)
        await conn.execute(
            "INSERT INTO order_notifications (event_id, tenant_id, order_id, customer_id)"
            " VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
            event.event_id, event.tenant_id, order.order_id, order.customer_id)


class AnalyticsConsumer(_Consumer):
    name = "analytics"

    async def apply(self, conn: PoolConnectionProxy, event: BusinessEvent) -> None:
        self._check()
        total = event.payload.get("total_cents")
        await conn.execute(
            "INSERT INTO analytics_events (event_id, event_type, tenant_id, occurred_at,"
            " total_cents) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
            event.event_id, event.event_type, event.tenant_id, event.occurred_at,
            total if isinstance(total, int) else None)


def order_consumers() -> dict[str, EventConsumer]:
    return {c.name: c for c in (InventoryConsumer(), NotificationConsumer(), AnalyticsConsumer())}
