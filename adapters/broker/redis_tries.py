"""How many times one stream entry was tried for reasons of its own (docs/redis-intake.md).

A small hash per entry, ``{stream}:tries:{entry id}``, with two fields: ``tries`` and ``error``
(the class name of the last failure that was the entry's own). It replaces Redis's delivery
count as the entry's bound, because Redis counts every delivery, those during a Temporal
outage too, and an outage is not the entry's fault (issue 25; ADR 0030 for the HTTP outbox).

A try is counted before the handler runs (``begin``), so a consumer that dies on an entry
(a crash, an out-of-memory kill) still spends one of its tries and a poison entry that kills
every consumer is bounded too; an outage gives the try back (``give_back``). The hash goes
with the ack or the dead letter (same MULTI). Its TTL is refreshed on every try and only
matters for an entry nobody tries any more (trimmed before its ack): it expires rather than
lingers. Were it ever to expire on a live entry, the entry would get its tries afresh, never
a dead letter it did not earn.
"""

from __future__ import annotations

import redis.asyncio as aioredis

#: A week: far longer than any entry stays pending while a consumer runs (it is tried every
#: half claim interval), short enough that keys of trimmed entries do not pile up.
TRIES_TTL_S = 7 * 24 * 3600


class EntryTries:
    def __init__(self, redis: aioredis.Redis, key: str) -> None:
        self._redis = redis
        self.key = key

    async def begin(self) -> tuple[int, str]:
        """Count this try; returns the tries so far (this one included) and the last error."""
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hincrby(self.key, "tries", 1)
            pipe.hget(self.key, "error")
            pipe.expire(self.key, TRIES_TTL_S)
            count, error, _ = await pipe.execute()
        return int(count), (error or b"").decode("utf-8", "replace")

    async def give_back(self) -> None:
        """The try met an outage, not the entry: it does not count."""
        await self._redis.hincrby(self.key, "tries", -1)  # type: ignore[misc]

    async def failed(self, error: str) -> None:
        """The try failed for the entry's own reason (kept: a class name, never text)."""
        await self._redis.hset(self.key, "error", error[:100])  # type: ignore[misc]
