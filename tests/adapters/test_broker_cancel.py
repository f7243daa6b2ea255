"""A consumer cancelled while an entry is in flight ends, and the entry stays for the next one.

The Temporal SDK turns a cancelled update call into an error of its own; a consumer took it for
the entry's failure, paused and read on, so a cancel (a shutdown, a test's cleanup after a
timeout) never ended the task: one full test run hung there for twenty minutes. On Python 3.11
a cancel can also vanish with no error at all, inside a library's ``asyncio.wait_for``
(tests/swallowed_cancel.py); the loops ask their task at their head."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from redis.exceptions import TimeoutError as RedisTimeoutError

from adapters.broker.cancel import cancelling, raise_if_cancelled, within
from adapters.broker.redis_outage import Outage
from adapters.broker.redis_streams import Outcome, RedisStreamIntake, StreamEntry, StreamLimits
from tests.swallowed_cancel import (
    answered_as_cancelled,
    cancelled_in_disguise,
    ends_cancelled,
)


class DisguisedCancel(Exception):
    """What the SDK raises for a cancelled call instead of ``CancelledError``."""


async def test_a_cancel_while_the_handler_runs_ends_the_redis_consumer(
        stream_intake: RedisStreamIntake) -> None:
    started = asyncio.Event()

    async def handler(entry: StreamEntry) -> Outcome:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            raise DisguisedCancel("the update call was cancelled") from None
        return "accepted"

    await stream_intake.publish({b"body": b"{}"})
    task = asyncio.create_task(stream_intake.consume(handler))
    await within(started.wait(), 10)
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=5)
    assert done, "the consumer went on after its cancel"
    assert task.cancelled()
    # Nothing was acked or dead-lettered, and the try was given back: the entry waits for the
    # next consumer's reclaim as if this one had never read it.
    assert await stream_intake.pending() == 1
    assert await stream_intake.dead_letters() == []


async def test_a_deadline_that_expired_is_no_cancel_of_the_consumer() -> None:
    async def slow() -> None:
        await asyncio.sleep(10)

    try:
        async with asyncio.timeout(0.01):
            await slow()
    except TimeoutError as exc:
        assert not cancelling()
        raise_if_cancelled(exc)  # no cancel pending: returns
    else:
        pytest.fail("the deadline did not expire")


class _FakeRedis:
    """A Redis whose first XREADGROUP meets the consumer's cancel and reports it as redis-py's
    ``TimeoutError`` (a ``RedisError``), as a read's timeout may when both land together."""

    def __init__(self) -> None:
        self.reads = 0

    async def xautoclaim(self, *args: object, **kwargs: object) -> list[object]:
        return [b"0-0", [], []]

    async def xreadgroup(self, *args: object, **kwargs: object) -> list[object]:
        self.reads += 1
        if self.reads == 1:
            await cancelled_in_disguise(RedisTimeoutError("Timeout reading from redis"))
        await asyncio.sleep(0.01)
        return []


async def test_a_cancel_a_redis_read_turned_into_its_timeout_ends_the_consumer() -> None:
    intake = RedisStreamIntake("redis://unused", "c1",
                               limits=StreamLimits(retry_pause_s=0.01, block_ms=10))
    fake = _FakeRedis()
    intake._redis = fake  # type: ignore[assignment]

    async def handler(entry: StreamEntry) -> Outcome:
        return "accepted"

    await ends_cancelled(intake.consume(handler), "the consumer",
                         lambda: f"{fake.reads} reads")


async def test_a_probe_that_reports_the_cancel_as_a_no_ends_the_outage_wait() -> None:
    probes = 0

    async def probe() -> bool:
        nonlocal probes
        probes += 1
        if probes == 1:
            await cancelled_in_disguise(RuntimeError("the probe's call was cancelled"))
        return False  # Temporal still out

    outage = Outage(0.01, 0.01, lambda kind, **fields: None)
    await ends_cancelled(outage.wait_out("UNAVAILABLE", probe, None), "the outage wait",
                         lambda: f"{probes} probes")


async def test_a_cancel_redis_py_swallowed_while_sending_the_read_still_ends_the_consumer(
        stream_intake: RedisStreamIntake) -> None:
    # redis-py sends every command through wait_for when a socket timeout is set: on 3.11 a
    # cancel landing as XREADGROUP was sent came back as the read's answer, and the consumer
    # read on for ever (the full suite's 360-second hangs in Redis tests' clean-up).
    redis = stream_intake._redis
    assert redis is not None
    read = redis.xreadgroup
    reads = 0

    async def read_as_sent_through_wait_for(*args: Any, **kwargs: Any) -> Any:
        nonlocal reads
        reads += 1
        if reads > 1:
            return await read(*args, **kwargs)
        return await answered_as_cancelled(lambda: read(*args, **kwargs))

    redis.xreadgroup = read_as_sent_through_wait_for  # type: ignore[method-assign]
    await ends_cancelled(stream_intake.consume(never_called), "the consumer",
                         lambda: f"{reads} reads")


async def test_a_cancel_the_probe_swallowed_still_ends_the_outage_wait() -> None:
    probes = 0

    async def probe() -> bool:
        nonlocal probes
        probes += 1

        async def still_out() -> bool:
            return False

        return await answered_as_cancelled(still_out) if probes == 1 else False

    outage = Outage(0.01, 0.01, lambda kind, **fields: None)
    await ends_cancelled(outage.wait_out("UNAVAILABLE", probe, None), "the outage wait",
                         lambda: f"{probes} probes")


async def never_called(entry: StreamEntry) -> Outcome:
    raise AssertionError("nothing was published")
