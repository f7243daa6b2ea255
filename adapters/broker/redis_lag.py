"""How far behind a stream's consumer group is, read from Redis (docs/redis-intake.md, "Lag").

All four figures come from the server in one round trip, its own clock included (an entry id
starts with the server's milliseconds when it was added), so a consumer host's clock never
skews the age. Counts and ages only: never an entry's text.
"""

from __future__ import annotations

from dataclasses import dataclass

import redis.asyncio as aioredis


@dataclass(frozen=True)
class StreamLag:
    #: Entries delivered to a consumer and not acked (XPENDING): in hand, or waiting to be
    #: reclaimed after a crash or an outage.
    pending: int
    #: Seconds since the oldest of them was added to the stream; None when none is pending.
    oldest_pending_age_s: float | None
    #: Entries no consumer of the group has read yet (XINFO GROUPS ``lag``); None when Redis
    #: cannot say (after some deletions it does not know).
    unread: int | None
    #: Entries in the dead-letter stream (XLEN): moved aside, waiting for a person.
    dead_letters: int


async def stream_lag(redis: aioredis.Redis, stream: str, group: str,
                     dead_stream: str) -> StreamLag:
    async with redis.pipeline(transaction=False) as pipe:
        pipe.xpending(stream, group)
        pipe.xinfo_groups(stream)
        pipe.xlen(dead_stream)
        pipe.time()
        summary, groups, dead, (seconds, micros) = await pipe.execute(raise_on_error=True)
    now_ms = seconds * 1000 + micros // 1000
    oldest = summary.get("min")
    age = None
    if summary["pending"] and oldest:
        added_ms = int((oldest.decode() if isinstance(oldest, bytes) else oldest).split("-")[0])
        age = max(0.0, (now_ms - added_ms) / 1000)
    return StreamLag(pending=int(summary["pending"]), oldest_pending_age_s=age,
                     unread=_unread(groups, group), dead_letters=int(dead))


def _unread(groups: list[dict[str, object]], group: str) -> int | None:
    for info in groups:
        name = info.get("name")
        if (name.decode() if isinstance(name, bytes) else name) == group:
            lag = info.get("lag")
            return int(lag) if isinstance(lag, int | str | bytes) else None
    return None

