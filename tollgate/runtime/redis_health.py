"""The Redis stream consumer's health and lag, on ``TOLLGATE_REDIS_HEALTH_PORT``
(docs/redis-intake.md, "Lag"; the figures in docs/metrics.md):

- ``GET /livez``: 200 while the process's event loop turns;
- ``GET /readyz``: 503 when Redis does not answer or the oldest pending entry is older than
  ``TOLLGATE_REDIS_STALL_SECONDS`` (as ``/healthz`` does for the HTTP outbox), else 200;
- ``GET /metrics``: the stream's figures, read from Redis at scrape time, so every consumer of
  the group reports the same ones (and whether this one is waiting out a Temporal outage).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AsyncExitStack

from aiohttp import web
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from redis.exceptions import RedisError

from adapters.broker.redis_lag import StreamLag
from adapters.broker.redis_streams import RedisStreamIntake
from tollgate.runtime.health import Check, health_app

METRICS_TYPE = "text/plain; version=0.0.4; charset=utf-8"


async def read_lag(intake: RedisStreamIntake) -> StreamLag | None:
    try:
        return await intake.lag()
    except (OSError, RedisError):
        return None


def stall_check(intake: RedisStreamIntake, stall_s: float) -> Check:
    async def check() -> str | None:
        lag = await read_lag(intake)
        if lag is None:
            return "Redis does not answer"
        age = lag.oldest_pending_age_s
        if age is not None and age > stall_s:
            return (f"the oldest pending entry of {intake.stream} is {age:.0f} s old "
                    f"(TOLLGATE_REDIS_STALL_SECONDS={stall_s:g})")
        return None

    return check


class StreamFigures(Collector):
    """The stream's figures, as one consumer serves them on its health port."""

    def __init__(self, intake: RedisStreamIntake, lag: StreamLag) -> None:
        self._intake, self._lag = intake, lag

    def collect(self) -> Iterator[Metric]:
        labels, values = ["stream", "group"], [self._intake.stream, self._intake.group]
        lag = self._lag
        for name, doc, value in (
                ("tollgate_redis_pending", "Entries delivered and not acked (XPENDING).",
                 lag.pending),
                ("tollgate_redis_oldest_pending_age_seconds",
                 "Age of the oldest pending entry (0 when none is pending).",
                 lag.oldest_pending_age_s or 0.0),
                ("tollgate_redis_unread", "Entries no consumer of the group has read yet.",
                 lag.unread),
                ("tollgate_redis_dead_letters", "Entries in the dead-letter stream (XLEN).",
                 lag.dead_letters),
                ("tollgate_redis_outage", "1 while this consumer waits out a Temporal outage.",
                 int(self._intake.outage.since is not None))):
            if value is None:
                continue
            family = GaugeMetricFamily(name, doc, labels=labels)
            family.add_metric(values, float(value))
            yield family


def lag_app(intake: RedisStreamIntake, stall_s: float) -> web.Application:
    app = health_app([stall_check(intake, stall_s)])

    async def metrics(_: web.Request) -> web.Response:
        lag = await read_lag(intake)
        if lag is None:
            return web.Response(status=503, text="Redis does not answer\n")
        registry = CollectorRegistry(auto_describe=False)
        registry.register(StreamFigures(intake, lag))
        return web.Response(body=generate_latest(registry),
                            headers={"Content-Type": METRICS_TYPE})

    app.router.add_get("/metrics", metrics)
    return app


async def serve_lag(exits: AsyncExitStack, intake: RedisStreamIntake, stall_s: float,
                    host: str, port: int) -> None:
    runner = web.AppRunner(lag_app(intake, stall_s), access_log=None)
    await runner.setup()
    exits.push_async_callback(runner.cleanup)
    await web.TCPSite(runner, host, port).start()
