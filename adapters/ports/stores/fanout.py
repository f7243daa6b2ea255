"""Fan-out: a business event's consumers and the ledger of their deliveries
(``activities.fanout``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from contracts.fanout import BusinessEvent

if TYPE_CHECKING:
    # A consumer writes on the delivery's own connection, so that its write and the delivery
    # record commit together: this port is a PostgreSQL transaction's, and says so.
    from asyncpg.pool import PoolConnectionProxy


@runtime_checkable


class EventConsumer(Protocol):
    """One consumer of a business event. ``down`` is the fault switch the tests and the demo
    flip: a down consumer raises ``RetryableError`` before touching anything."""

    name: str
    down: bool

    async def apply(self, conn: PoolConnectionProxy, event: BusinessEvent) -> None: ...


class FanOutLedger(Protocol):
    async def deliver(self, event: BusinessEvent, consumer: EventConsumer,
                      attempt: int) -> Literal["delivered", "duplicate"]: ...

    async def dead_letter(self, event: BusinessEvent, consumer: str, retry_state: str,
                          error: str) -> None: ...
