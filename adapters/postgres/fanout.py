"""PostgreSQL side of fan-out: the (event, consumer) idempotency record and dead letters.

A delivery inserts its record and runs the consumer's write in one transaction: a second
delivery of the same event to the same consumer finds the record and writes nothing, and a
consumer that fails leaves no record, so its retry is clean.
"""

from __future__ import annotations

from typing import Literal

import asyncpg

from adapters.ports.stores.fanout import EventConsumer
from contracts.fanout import BusinessEvent

_ERROR_CHARS = 500


class FanOutStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def deliver(self, event: BusinessEvent, consumer: EventConsumer,
                      attempt: int) -> Literal["delivered", "duplicate"]:
        async with self._pool.acquire() as conn, conn.transaction():
            fresh = await conn.fetchval(
                "INSERT INTO consumer_deliveries (event_id, consumer, event_type, status,"
                " attempts) VALUES ($1, $2, $3, 'delivered', $4) ON CONFLICT DO NOTHING"
                " RETURNING true", event.event_id, consumer.name, event.event_type, attempt)
            if not fresh:
                return "duplicate"
            await consumer.apply(conn, event)
        return "delivered"

    async def dead_letter(self, event: BusinessEvent, consumer: str, retry_state: str,
                          error: str) -> None:
        await self._pool.execute(
            "INSERT INTO consumer_dead_letters (event_id, consumer, event_type, tenant_id,"
            " retry_state, error, replay_plan) VALUES ($1, $2, $3, $4, $5, $6, $7)"
            " ON CONFLICT DO NOTHING",
            event.event_id, consumer, event.event_type, event.tenant_id, retry_state,
            error[:_ERROR_CHARS],
            f"fix {consumer}, then start consume/{event.event_id}/{consumer} again "
            "(the delivery record makes a replay of a done consumer a no-op)")

    async def dead_letters(self, event_id: str) -> dict[str, str]:
        rows = await self._pool.fetch(
            "SELECT consumer, error FROM consumer_dead_letters WHERE event_id = $1", event_id)
        return {r["consumer"]: r["error"] for r in rows}

    async def delivered(self, event_id: str) -> list[str]:
        rows = await self._pool.fetch(
            "SELECT consumer FROM consumer_deliveries WHERE event_id = $1 ORDER BY consumer",
            event_id)
        return [r["consumer"] for r in rows]
