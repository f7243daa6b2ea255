"""A Temporal outage longer than the old bound (``max_deliveries`` x ``claim_idle_s``) against a
real redis-server: the consumer notices it, stops reading, says so once, waits it out, and
every entry is processed once afterwards; none is dead-lettered (issue 25: an outage is not
the entry's fault). Temporal goes away for the consumer only, behind a TCP gate it reaches
the server through (connections dropped, connects refused), as a partition or a restart."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import asyncpg
import pytest
import redis.asyncio as aioredis
from structlog.testing import capture_logs
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from adapters.broker.cancel import within
from adapters.broker.redis_outage import Unreachable
from adapters.broker.redis_streams import Outcome, RedisStreamIntake, StreamEntry, StreamLimits
from tests.adapters.redis_kit import (
    FAST,
    Answers,
    Make,
    drain,
    figures,
    key_of,
    rows_for,
    run_until,
    scrape,
)
from tests.conftest import TENANT_SECRETS, signed_event
from tests.eventually import eventually
from tests.tcp_gate import TcpGate
from tollgate.intake.redis_stream import entry_handler, temporal_probe

#: The old bound was 3 deliveries x 2 s: an outage past 6 s dead-lettered what it met.
LIMITS = StreamLimits(claim_idle_s=2.0, max_deliveries=3, handler_timeout_s=1.5,
                      retry_pause_s=0.05, block_ms=100, outage_pause_s=0.2,
                      outage_pause_max_s=1.0)
OLD_BOUND_S = LIMITS.max_deliveries * LIMITS.claim_idle_s


@pytest.fixture
async def gated(env: WorkflowEnvironment) -> AsyncIterator[tuple[TcpGate, Client]]:
    host, port = env.client.service_client.config.target_host.rsplit(":", 1)
    gate = TcpGate(host, int(port))
    await gate.open()
    client = await Client.connect(gate.address, namespace=env.client.namespace,
                                  data_converter=env.client.data_converter)
    yield gate, client
    await gate.shut()


async def test_an_outage_past_the_old_bound_dead_letters_nothing_and_loses_nothing(
        make_stream_intake: Make, worker_client: tuple[Client, str], pool: asyncpg.Pool,
        gated: tuple[TcpGate, Client], redis_url: str) -> None:
    _, queue = worker_client  # the worker reaches the server directly throughout
    gate, client = gated
    intake = await make_stream_intake("c1", LIMITS)
    answers = Answers(entry_handler(client, queue, TENANT_SECRETS))
    before = signed_event("C-1001")
    await intake.publish({b"body": before.encode()})
    with capture_logs() as logs:
        task = asyncio.create_task(intake.consume(answers,
                                                  reachable=temporal_probe(client, queue)))
        try:
            await eventually(lambda: len(answers), "the first answer", until=lambda n: n == 1,
                             timeout=60)
            await gate.shut()
            during = [signed_event(f"C-10{n:02d}") for n in range(2, 6)]
            for raw in during:
                await intake.publish({b"body": raw.encode()})

            def noticed() -> bool:
                return any(e["event"] == "stream_temporal_unreachable" for e in logs)

            await eventually(noticed, "the outage noticed", timeout=60)
            await asyncio.sleep(2 * OLD_BOUND_S)  # the outage lasts past the old bound
            assert await intake.dead_letters() == []
            assert len(answers) == 1  # nothing was answered while it lasted
            seen = figures((await scrape(intake, "/metrics"))[1])  # what an operator sees
            assert seen["tollgate_redis_outage"] == 1
            assert seen["tollgate_redis_pending"] + seen["tollgate_redis_unread"] == len(during)
            await gate.open()
            await eventually(intake.pending, "every entry answered and acked",
                             until=lambda n: n == 0 and len(answers) == 5, timeout=90)
        finally:
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
    assert answers == ["accepted"] * 5
    for raw in [before, *during]:
        assert await rows_for(pool, key_of(raw)) == 1
    assert await intake.dead_letters() == []
    told = [(e["event"], sorted(set(e) - {"event", "log_level"})) for e in logs
            if e["event"].startswith("stream_temporal") or e["event"] == "stream_no_answer"]
    # Once when it started and once when it ended: no per-entry or per-probe noise, no text.
    assert told == [("stream_temporal_unreachable", ["error"]),
                    ("stream_temporal_reachable", ["after_s"])]
    raw_redis = aioredis.Redis.from_url(redis_url)
    try:  # the per-entry try counters went with the acks
        assert await raw_redis.keys(f"{intake.stream}:tries:*") == []
    finally:
        await raw_redis.aclose()


async def dies_on_the_entry(intake: RedisStreamIntake) -> None:
    """A consumer killed while its intake of the entry runs (XREADGROUP or XAUTOCLAIM done)."""
    picked = asyncio.Event()

    async def dies(entry: StreamEntry) -> Outcome:
        picked.set()
        await asyncio.Event().wait()  # the process is killed here
        raise AssertionError("unreachable")

    task = asyncio.create_task(intake.consume(dies))
    await within(picked.wait(), 30)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_an_entry_that_kills_every_consumer_still_runs_out_of_tries(
        make_stream_intake: Make) -> None:
    """A try is counted before the intake runs: a consumer that dies on an entry (no error,
    no answer, no ack) spends one, so poison that kills the process is bounded too."""
    first = await make_stream_intake("c0")
    await first.publish({b"body": b"{}"})
    for n in range(FAST.max_deliveries):
        await dies_on_the_entry(await make_stream_intake(f"doomed-{n}"))

    async def never(entry: StreamEntry) -> Outcome:
        raise AssertionError("an entry out of tries is not handed on")

    async def moved_aside() -> bool:
        return bool(await first.dead_letters())

    await run_until(first, never, moved_aside)
    [(_, reason)] = await first.dead_letters()
    assert reason == f"delivered_too_often: {FAST.max_deliveries} tries without an answer"
    assert await first.pending() == 0


async def test_a_stop_during_an_outage_ends_the_consumer_and_the_entry_keeps_its_tries(
        make_stream_intake: Make, redis_url: str) -> None:
    """SIGTERM while the consumer waits out an outage: it stops at once (not after the
    backoff), the entry stays pending for the next consumer, and the try it met the outage
    with was given back."""
    one_try = StreamLimits(claim_idle_s=0.5, max_deliveries=1, handler_timeout_s=5,
                           retry_pause_s=0.05, block_ms=100, outage_pause_s=3600,
                           outage_pause_max_s=3600)
    intake = await make_stream_intake("c1", one_try)
    entry_id = await intake.publish({b"body": b"{}"})
    stop, met = asyncio.Event(), asyncio.Event()

    async def temporal_down(entry: StreamEntry) -> Outcome:
        met.set()
        raise Unreachable("UNAVAILABLE")

    async def still_down() -> bool:
        return False

    task = asyncio.create_task(intake.consume(temporal_down, stop=stop, reachable=still_down))
    await within(met.wait(), 30)
    stop.set()
    await within(task, 30)  # an hour's backoff is not waited out
    assert await intake.pending() == 1
    raw = aioredis.Redis.from_url(redis_url)
    try:
        assert await raw.hget(f"{intake.stream}:tries:{entry_id}", "tries") == b"0"
    finally:
        await raw.aclose()

    async def back(entry: StreamEntry) -> Outcome:
        return "accepted"

    answers = Answers(back)  # its only try is still its own: answered, not dead-lettered
    await drain(await make_stream_intake("c2", one_try), answers)
    assert answers == ["accepted"] and await intake.dead_letters() == []
