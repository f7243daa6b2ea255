"""Fixtures of the broker intake tests: one real ``redis-server`` or ``rabbitmq-server`` per
module (skipped, naming the package, when it is not installed) and consumers of a fresh Redis
stream per test."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractContextManager

import pytest

from adapters.broker.redis_streams import RedisStreamIntake, StreamLimits
from tests.adapters.redis_kit import FAST, Make
from tests.rabbitmq import rabbitmq_launcher, rabbitmq_node
from tests.redis_server import redis_binary, redis_node
from tollgate.intake.redis_stream import report_problem


def _server(found: str | None, package: str,
            start: Callable[[str], AbstractContextManager[str]]) -> Iterator[str]:
    """The URL of a server ``start`` runs from what was ``found``; the test is skipped, naming
    the Debian package, when nothing was."""
    if found is None:
        pytest.skip(f"{package} is not installed (apt-get install {package})")
    with start(found) as url:
        yield url


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    yield from _server(redis_binary(), "redis-server", redis_node)


@pytest.fixture(scope="module")
def amqp_url() -> Iterator[str]:
    yield from _server(rabbitmq_launcher(), "rabbitmq-server", rabbitmq_node)


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
