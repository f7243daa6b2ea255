"""Redis Streams as a producer of business events (redis-py, asyncio), docs/redis-intake.md.

    stream tollgate.events, group tollgate
        XREADGROUP >  --handler answered (start durable)-->  MULTI: XACK, DEL the entry's tries
                      --InvalidInput (poison)------------>  MULTI: XADD tollgate.events.dead
                                                            (fields + x-tollgate-reason), XACK
                      --Unreachable (an outage)---------->  left pending, try not counted;
                                                            reading stops, probe with backoff
                      --anything else-------------------->  left pending, try counted; a pause
        XAUTOCLAIM (idle past claim_idle_s) --> the same, or, past max_deliveries tries,
                                                dead-lettered ``delivered_too_often``

An entry is acked only after the handler returned, i.e. after the intake's answer is durable: a
consumer killed between XREADGROUP and XACK leaves the entry in the group's pending list, where
any consumer's XAUTOCLAIM finds it once it has been idle long enough, and the event's workflow
id turns the second delivery into a duplicate, never a second run. An entry that fails without
an answer stays pending and the loop goes on to the next one, so one entry never holds back the
others. Moving aside and the ack are one MULTI/EXEC, so a crash cannot dead-letter an entry and
leave it pending.

Tries are counted here, not by Redis: Redis counts every delivery, and an outage of what the
handler talks to (Temporal) is no entry's fault (issue 25, as the HTTP outbox: ADR 0030). Each
try bumps a small per-entry hash (``redis_tries``) before the handler runs, so a consumer that
dies on an entry still spends one of its tries; a handler that says ``Unreachable`` gives the
try back, and the consumer stops reading until the handler's probe answers again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Literal

import redis.asyncio as aioredis
from redis.exceptions import RedisError, ResponseError

from adapters.broker.cancel import cancelling, raise_if_cancel_pending, raise_if_cancelled
from adapters.broker.redis_lag import StreamLag, stream_lag
from adapters.broker.redis_outage import Outage, Probe, Unreachable, answers
from adapters.broker.redis_tries import EntryTries
from contracts.errors import InvalidInput, RetryableError

EVENTS_STREAM = "tollgate.events"
DEAD_LETTER_STREAM = "tollgate.events.dead"
GROUP = "tollgate"
REASON_FIELD = b"x-tollgate-reason"
SOURCE_ID_FIELD = b"x-tollgate-entry-id"

Outcome = Literal["accepted", "duplicate", "quarantined"]


@dataclass(frozen=True)
class StreamEntry:
    """One stream entry as a handler sees it: its id and its fields, as bytes (an entry's
    fields are the producer's; nothing is decoded before the edge rules look at them)."""

    entry_id: str
    fields: Mapping[bytes, bytes]
    #: Where it was read (for the intake's trace span): the stream and the consumer group.
    stream: str = ""
    group: str = ""


#: Turns one entry into the intake's durable answer; raises ``InvalidInput`` for poison and
#: ``Unreachable`` when what it hands entries to cannot be reached.
Handler = Callable[[StreamEntry], Awaitable[Outcome]]

#: Told what went wrong, as a kind and plain fields (ids, reason codes, exception class
#: names: never an entry's text); the shell logs it. Adapters do not log themselves.
Reporter = Callable[..., None]


def _silent(kind: str, **fields: str) -> None:
    return None


@dataclass(frozen=True)
class StreamLimits:
    """How long an entry may sit unacked before another consumer takes it over, how many
    deliveries it gets, and how long one handler call may take before it counts as failed."""

    claim_idle_s: float = 60.0
    max_deliveries: int = 5
    handler_timeout_s: float = 30.0
    retry_pause_s: float = 1.0
    batch: int = 16
    block_ms: int = 1000
    #: First wait after an outage is noticed, doubled per failed probe up to the cap.
    outage_pause_s: float = 1.0
    outage_pause_max_s: float = 30.0


class RedisStreamIntake:
    def __init__(self, url: str, consumer: str, *, stream: str = EVENTS_STREAM,
                 group: str = GROUP, dead_stream: str = DEAD_LETTER_STREAM,
                 limits: StreamLimits | None = None, report: Reporter = _silent) -> None:
        self._url = url
        self.consumer = consumer
        self.stream = stream
        self.group = group
        self.dead_stream = dead_stream
        self.limits = limits or StreamLimits()
        self._report = report
        self._redis: aioredis.Redis | None = None
        self.outage = Outage(self.limits.outage_pause_s, self.limits.outage_pause_max_s,
                             report)

    async def connect(self) -> None:
        """Connect and create the group (idempotent: every consumer may ask for it)."""
        # Bounded socket waits: a Redis that stops answering (a partition) is an error the loop
        # waits out, never a read blocked for ever. The read itself blocks for block_ms.
        self._redis = aioredis.Redis.from_url(
            self._url, decode_responses=False, socket_connect_timeout=5.0,
            socket_timeout=self.limits.block_ms / 1000 + 10.0)
        try:
            await self._redis.xgroup_create(self.stream, self.group, id="0", mkstream=True)
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):  # e.g. WRONGTYPE: the key is not a stream
                raise RetryableError("broker_refused", "Redis refused the consumer group: "
                                     f"{str(exc).split(' ')[0]}") from None
        except (OSError, RedisError) as exc:
            raise RetryableError("broker_unreachable",
                                 f"cannot connect to Redis ({type(exc).__name__})") from None

    async def close(self) -> None:
        if self._redis is not None:
            await self._redis.aclose()

    async def publish(self, fields: Mapping[bytes | str, bytes | str]) -> str:
        """XADD one entry (what a producer does; tests and the demo use it)."""
        entry_id = await self._require().xadd(self.stream, dict(fields))  # type: ignore[arg-type]
        return entry_id.decode()

    async def consume(self, handler: Handler, *, stop: asyncio.Event | None = None,
                      reachable: Probe | None = None) -> None:
        """Reclaim what a dead consumer left, then read new entries, until ``stop`` is set.
        While the handler's downstream is unreachable nothing is read or reclaimed: the
        consumer waits, asking ``reachable`` (when given) with a capped exponential backoff."""
        redis = self._require()
        last_claim = float("-inf")
        while stop is None or not stop.is_set():
            raise_if_cancel_pending()  # a cancel redis-py swallowed (adapters/broker/cancel.py)
            try:
                if time.monotonic() - last_claim >= self.limits.claim_idle_s / 2:
                    await self.reclaim(handler, reachable)
                    last_claim = time.monotonic()
                read = await redis.xreadgroup(self.group, self.consumer, {self.stream: ">"},
                                              count=self.limits.batch,
                                              block=self.limits.block_ms)
                for _, entries in read or []:
                    for raw_id, fields in entries:
                        if stop is not None and stop.is_set():
                            return  # the rest stays pending: another consumer reclaims it
                        await self._one(StreamEntry(raw_id.decode(), fields, self.stream,
                                                    self.group), handler, reachable)
            # In both branches below the error may be this task's cancel in another guise (a
            # library's own error: redis-py's TimeoutError, a RedisError, for a read; the
            # SDK's for a handler). The cancel is then spent, and the loop would wait and read
            # on for ever (a full run hung 360 s in a test's cleanup, cancelling at XREADGROUP):
            # a pending cancel ends the consumer, whatever it was turned into.
            except Unreachable as exc:
                raise_if_cancelled(exc)
                # Entries read in this batch and not handled stay pending; the reclaim after
                # the outage takes them (their idle time has passed by then).
                await self.outage.wait_out(exc.code, reachable, stop)
                last_claim = float("-inf")
            except (OSError, RedisError) as exc:
                raise_if_cancelled(exc)
                # Redis restarting: nothing is lost (what was read and not acked stays
                # pending, and the next reclaim takes it over); wait and go on.
                self._report("redis_unavailable", error=type(exc).__name__)
                await asyncio.sleep(self.limits.retry_pause_s)

    async def reclaim(self, handler: Handler, reachable: Probe | None = None) -> int:
        """XAUTOCLAIM every entry idle past ``claim_idle_s`` (a crashed or stuck consumer's)
        and handle it here; returns how many were taken over."""
        redis = self._require()
        idle_ms = int(self.limits.claim_idle_s * 1000)
        cursor: bytes | str = "0-0"
        taken = 0
        while True:
            reply = await redis.xautoclaim(self.stream, self.group, self.consumer, idle_ms,
                                           start_id=cursor, count=self.limits.batch)
            cursor, claimed = reply[0], reply[1]
            if len(reply) > 2 and reply[2]:  # Redis 7: trimmed before anyone acked them
                self._report("trimmed_before_ack", count=str(len(reply[2])))
            for raw_id, fields in claimed:
                if fields is None:  # trimmed away before anyone acked it: nothing to hand on
                    continue
                taken += 1
                await self._one(StreamEntry(raw_id.decode(), fields, self.stream, self.group),
                                handler, reachable)
            if cursor in (b"0-0", "0-0"):
                return taken

    async def pending(self) -> int:
        """Entries delivered to some consumer and not yet acked."""
        summary = await self._require().xpending(self.stream, self.group)
        return int(summary["pending"])

    async def lag(self) -> StreamLag:
        """Pending entries, the oldest one's age, unread entries and dead letters."""
        return await stream_lag(self._require(), self.stream, self.group, self.dead_stream)

    async def dead_letters(self) -> list[tuple[dict[bytes, bytes], str]]:
        """Every dead-lettered entry: (its fields, the reason). Nothing is removed: dead
        letters are for people, and an operator re-adds an entry once it is fixed."""
        rows = await self._require().xrange(self.dead_stream)
        return [(dict(fields), fields.get(REASON_FIELD, b"").decode("utf-8", "replace"))
                for _, fields in rows]

    async def _one(self, entry: StreamEntry, handler: Handler,
                   reachable: Probe | None = None) -> None:
        tries = self._tries(entry.entry_id)
        count, last_error = await tries.begin()
        if count > self.limits.max_deliveries:
            last = f" (last: {last_error})" if last_error else ""
            await self._dead_letter(entry, f"delivered_too_often: {count - 1} tries without "
                                    f"an answer{last}", tries.key)
            return
        deadline = asyncio.timeout(self.limits.handler_timeout_s)
        try:
            async with deadline:
                await handler(entry)
        except InvalidInput as exc:
            await self._dead_letter(entry, f"{exc.code}: {exc.message}"[:300], tries.key)
            return
        except Unreachable as exc:
            await tries.give_back()
            raise_if_cancelled(exc)
            raise
        except Exception as exc:
            if cancelling():  # this consumer stopping, not the entry failing: no try counted
                await tries.give_back()
                raise_if_cancelled(exc)
            # Past the deadline: the handler's own exception may stand for the cancellation
            # (the Temporal SDK turns a cancelled update call into one of its own).
            timed_out = isinstance(exc, TimeoutError) or deadline.expired()
            if timed_out and reachable is not None and not await answers(reachable):
                # Nobody took the entry because nobody could: an outage, not this entry.
                await tries.give_back()
                raise Unreachable("no_answer_in_time") from None
            error = "TimeoutError" if timed_out else type(exc).__name__
            self._report("no_answer", entry_id=entry.entry_id, error=error)
            await tries.failed(error)
            # Not known durable (a timeout, a bug in one entry's path). Left pending:
            # XAUTOCLAIM offers it again once idle. The pause keeps trouble from spinning.
            await asyncio.sleep(self.limits.retry_pause_s)
            return
        async with self._require().pipeline(transaction=True) as pipe:
            pipe.xack(self.stream, self.group, entry.entry_id)
            pipe.delete(tries.key)
            await pipe.execute()
        self.outage.over()

    def _tries(self, entry_id: str) -> EntryTries:
        return EntryTries(self._require(), f"{self.stream}:tries:{entry_id}")

    async def _dead_letter(self, entry: StreamEntry, reason: str, tries_key: str) -> None:
        """The entry's own fields plus the reason and its id, added and acked atomically."""
        fields = {k: v for k, v in entry.fields.items()
                  if k not in (REASON_FIELD, SOURCE_ID_FIELD)}
        fields[REASON_FIELD] = reason.encode("utf-8", "replace")
        fields[SOURCE_ID_FIELD] = entry.entry_id.encode()
        self._report("dead_lettered", entry_id=entry.entry_id, reason=reason.split(":")[0])
        async with self._require().pipeline(transaction=True) as pipe:
            pipe.xadd(self.dead_stream, fields)  # type: ignore[arg-type]
            pipe.xack(self.stream, self.group, entry.entry_id)
            pipe.delete(tries_key)
            await pipe.execute()

    def _require(self) -> aioredis.Redis:
        if self._redis is None:
            raise RuntimeError("call connect() first")
        return self._redis

