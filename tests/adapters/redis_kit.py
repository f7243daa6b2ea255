"""What the Redis stream intake tests share: the test limits, a consumer run until an outcome,
and a handler that records the answers it gave."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable

import asyncpg
import pytest
from aiohttp.test_utils import TestClient, TestServer
from prometheus_client.parser import text_string_to_metric_families

from adapters.broker.redis_streams import (
    Handler,
    Outcome,
    RedisStreamIntake,
    StreamEntry,
    StreamLimits,
)
from tests.eventually import eventually
from tollgate.runtime.redis_health import lag_app

#: Short enough that a test's reclaim comes quickly, long enough that a live consumer's entry
#: is never taken from it mid-intake in these tests.
FAST = StreamLimits(claim_idle_s=0.5, max_deliveries=3, handler_timeout_s=20,
                    retry_pause_s=0.05, block_ms=100)

Make = Callable[..., Awaitable[RedisStreamIntake]]


class Answers(list[Outcome]):
    """A handler that records each answer ``handler`` gave, in order."""

    def __init__(self, handler: Handler) -> None:
        super().__init__()
        self._handler = handler

    async def __call__(self, entry: StreamEntry) -> Outcome:
        self.append(await self._handler(entry))
        return self[-1]


async def run_until(intake: RedisStreamIntake, handler: Handler,
                    done: Callable[[], Awaitable[bool]]) -> None:
    task = asyncio.create_task(intake.consume(handler))
    try:
        await eventually(done, "the consumer getting there", timeout=30)
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


async def drain(intake: RedisStreamIntake, answers: Answers, count: int = 1) -> None:
    """Consume until ``count`` answers were given and nothing is left pending."""
    async def drained() -> bool:
        return len(answers) >= count and await intake.pending() == 0

    await run_until(intake, answers, drained)


def key_of(raw: str) -> str:
    return str(json.loads(raw)["idempotency_key"])


async def rows_for(pool: asyncpg.Pool, key: str) -> int:
    return int(await pool.fetchval("SELECT count(*) FROM events WHERE idempotency_key = $1",
                                   key))


async def scrape(intake: RedisStreamIntake, path: str,
                 stall_s: float = 3600.0) -> tuple[int, str]:
    """What the consumer process's lag endpoint answers on ``path``."""
    async with TestClient(TestServer(lag_app(intake, stall_s))) as client:
        answer = await client.get(path)
        return answer.status, await answer.text()


def figures(text: str) -> dict[str, float]:
    return {sample.name: sample.value for family in text_string_to_metric_families(text)
            for sample in family.samples}
