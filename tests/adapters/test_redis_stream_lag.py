"""The stream's lag as an operator reads it from the consumer process, against a real
redis-server: pending entries, the oldest one's age, unread entries and dead letters on
``/metrics``; ``/readyz`` failing once the oldest pending entry is past the stall limit."""

from __future__ import annotations

import redis.asyncio as aioredis

from tests.adapters.redis_kit import Make, figures, scrape

HOUR_S = 3600.0


async def test_an_idle_stream_reads_nothing_behind_and_is_ready(make_stream_intake: Make) -> None:
    intake = await make_stream_intake("c1")
    status, text = await scrape(intake, "/metrics")
    assert status == 200
    assert figures(text) == {"tollgate_redis_pending": 0,
                             "tollgate_redis_oldest_pending_age_seconds": 0,
                             "tollgate_redis_unread": 0, "tollgate_redis_dead_letters": 0,
                             "tollgate_redis_outage": 0}
    assert await scrape(intake, "/readyz") == (200, "ready\n")


async def test_pending_unread_and_dead_letters_are_counted_and_an_old_entry_fails_readyz(
        make_stream_intake: Make, redis_url: str) -> None:
    intake = await make_stream_intake("c1")
    # The oldest entry was added an hour and more ago (an id in the past, as its producer's
    # XADD would have stamped it then); a crashed consumer read it and two others, never acked.
    raw = aioredis.Redis.from_url(redis_url)
    try:
        seconds, _ = await raw.time()
        hour_ago_ms = (seconds - 2 * int(HOUR_S)) * 1000
        await raw.xadd(intake.stream, {b"body": b"{}"}, id=f"{hour_ago_ms}-0")
        for _ in range(2):
            await intake.publish({b"body": b"{}"})
        await raw.xreadgroup(intake.group, "crashed", {intake.stream: ">"}, count=3)
        for _ in range(4):  # not read by anyone yet
            await intake.publish({b"body": b"{}"})
        # One moved aside earlier, as a consumer's MULTI left it.
        await raw.xadd(intake.dead_stream, {b"note": b"x", b"x-tollgate-reason": b"no_body"})
    finally:
        await raw.aclose()

    status, text = await scrape(intake, "/metrics")
    seen = figures(text)
    assert status == 200
    assert seen["tollgate_redis_pending"] == 3
    assert seen["tollgate_redis_unread"] == 4
    assert seen["tollgate_redis_dead_letters"] == 1
    assert 2 * HOUR_S <= seen["tollgate_redis_oldest_pending_age_seconds"] < 3 * HOUR_S
    status, text = await scrape(intake, "/readyz")
    assert status == 503 and "oldest pending entry" in text and "TOLLGATE_REDIS_STALL" in text
    assert (await scrape(intake, "/readyz", 3 * HOUR_S))[0] == 200
    assert (await scrape(intake, "/livez"))[0] == 200
