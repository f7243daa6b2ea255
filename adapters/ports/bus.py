"""What the fan-out activities need of the message bus: a consumer's dead letter put on its own
queue (``contracts.bus.dead_letter_queue``) beside the PostgreSQL row, for the people who watch
the broker (seed 002: ``<consumer>.<event>.dlq``)."""

from __future__ import annotations

from typing import Protocol

from contracts.fanout import BusinessEvent


class ConsumerDeadLetters(Protocol):
    async def dead_letter(self, event: BusinessEvent, consumer: str, retry_state: str,
                          reason: str) -> None:
        """Publish, confirmed; raises ``RetryableError`` when the broker cannot take it."""
        ...

    async def close(self) -> None: ...
