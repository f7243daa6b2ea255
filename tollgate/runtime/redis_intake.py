"""``python -m tollgate.runtime.redis_intake``: the Redis Streams consumer as a process
(docs/redis-intake.md). It lives with the other process entry points, not in ``intake``,
because it builds the Temporal client (``runtime.client``) and intake must not import runtime.

A start-up problem (no URL, no tenants file, Temporal or Redis unreachable) ends the process
with one line on stderr and exit 1, never a traceback; once running, a Redis restart is waited
out, and so is an unreachable Temporal: reading stops, entries stay pending with no try
counted, and the consumer probes Temporal with a capped backoff until it answers. With
``TOLLGATE_REDIS_HEALTH_PORT`` it serves the stream's lag (``runtime.redis_health``). SIGTERM stops
it cleanly (exit 0).
"""

from __future__ import annotations

import asyncio
import signal
from contextlib import AsyncExitStack

from contracts.errors import RetryableError
from tollgate.config.settings import Settings
from tollgate.intake.recorded import recorded_ends_at
from tollgate.intake.redis_stream import entry_handler, intake_for, temporal_probe
from tollgate.observability.logs import configure_logging
from tollgate.runtime.client import build_client
from tollgate.runtime.entry import run_main, start_refusals
from tollgate.runtime.redis_health import serve_lag


async def run(settings: Settings) -> None:
    intake = intake_for(settings)
    secrets = settings.tenant_secrets()
    with start_refusals(settings.temporal_address):  # Temporal down: one line
        client = await build_client(settings.temporal_address, settings.namespace,
                                    env=settings.env)
    try:
        await intake.connect()
    except RetryableError as exc:
        raise SystemExit(f"{exc.message} (TOLLGATE_REDIS_URL)") from None
    # SIGTERM (a deployment's stop) ends the loop after the entry in hand is answered and
    # acked; whatever was read and not yet handled stays pending for the next consumer.
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    async with AsyncExitStack() as exits:
        exits.push_async_callback(intake.close)
        if settings.redis.health_port:
            try:
                await serve_lag(exits, intake, settings.redis.stall_s,
                                settings.worker.health_host, settings.redis.health_port)
            except OSError as exc:
                raise SystemExit(f"TOLLGATE_REDIS_HEALTH_PORT: cannot listen on "
                                 f"{settings.redis.health_port} ({exc.strerror})") from None
        # PostgreSQL, when configured, for a repeat's end recorded after its run (ADR 0062).
        recorded = await exits.enter_async_context(recorded_ends_at(settings.dsn))
        await intake.consume(entry_handler(client, settings.task_queue, secrets, recorded),
                             stop=stop, reachable=temporal_probe(client, settings.task_queue))


def main() -> None:
    configure_logging()
    run_main(run(Settings.from_env()))


if __name__ == "__main__":
    main()
