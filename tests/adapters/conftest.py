"""Fixtures of the Redis stream intake tests: one real ``redis-server`` per module (skipped,
naming the package, when it is not installed) and consumers of a fresh stream per test."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator

import pytest

from adapters.broker.redis_streams import RedisStreamIntake, StreamLimits
from tests.adapters.redis_kit import FAST, Make
from tests.redis_server import redis_binary, redis_node
from tollgate.intake.redis_stream import report_problem


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    binary = redis_binary()
    if binary is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    with redis_node(binary) as url:
        yield url


@pytest.fixture
async def make_stream_intake(redis_url: str) -> AsyncIterator[Make]:
    """Consumers of one fresh stream and group per test."""
    stream = f"tollgate.events.{uuid.uuid4().hex[:6]}"
    made: list[RedisStreamIntake] = []

    async def make(consumer: str, limits: StreamLimits = FAST) -> RedisStreamIntake:
        intake = RedisStreamIntake(redis_url, consumer, stream=stream,
                                   dead_stream=f"{stream}.dead", limits=limits,
                                   report=report_problem)
        await intake.connect()
        made.append(intake)
        return intake

    yield make
    for intake in made:
        await intake.close()


@pytest.fixture
async def stream_intake(make_stream_intake: Make) -> RedisStreamIntake:
    return await make_stream_intake("c1")
