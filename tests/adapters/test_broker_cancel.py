"""A consumer cancelled while an entry is in flight ends, and the entry stays for the next one.

The Temporal SDK turns a cancelled update call into an error of its own; a consumer took it for
the entry's failure, paused and read on, so a cancel (a shutdown, a test's cleanup after a
timeout) never ended the task: one full test run hung there for twenty minutes."""

from __future__ import annotations

import asyncio

import pytest

from adapters.broker.cancel import cancelling, raise_if_cancelled
from adapters.broker.redis_streams import Outcome, RedisStreamIntake, StreamEntry


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
    await asyncio.wait_for(started.wait(), 10)
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
