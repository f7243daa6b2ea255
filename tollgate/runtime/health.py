"""A worker process as a deployment runs it: health endpoints, and a graceful stop on SIGTERM.

``python worker.py`` runs here. With ``TOLLGATE_HEALTH_PORT`` set, a tiny HTTP server answers

- ``GET /livez``: 200 while the process's event loop turns (a wedged process fails it);
- ``GET /readyz``: 200 when every worker in the process polls and, for a main worker,
  PostgreSQL answers ``SELECT 1``; 503 with the reason otherwise.

SIGTERM (what Kubernetes, compose and systemd send) and SIGINT stop polling at once; activities
in flight get ``TOLLGATE_DRAIN_SECONDS`` (default 10) to finish, then are cancelled and
Temporal hands them to another worker (docs/deploy.md: the grace period must exceed it).
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AsyncExitStack
from datetime import timedelta

from aiohttp import web
from temporalio.worker import Worker

from adapters.broker.cancel import within
from tollgate.config.settings import Settings
from tollgate.observability.sdk_runtime import sdk_runtime
from tollgate.runtime.client import build_client
from tollgate.runtime.entry import start_refusals
from tollgate.runtime.identity import install_decision_verifier, warn_if_identity_unset

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
#: A probe that takes longer than this counts as "PostgreSQL does not answer".
PROBE_TIMEOUT_S = 3.0

#: Past the drain window, the rest of a stop (connections, pools) gets this long per step.
STOP_MARGIN_S = 5.0

Check = Callable[[], Awaitable[str | None]]


class StopWatch:
    """Keeps a stop a stop: once armed (by the stop signal), the task that runs the stop is
    cancelled when it outlasts the drain window, and again every ``STOP_MARGIN_S`` while it
    still runs. The SDK retries a failing local activity even after shutdown began (and its
    shutdown waits for it), so a step whose retries never end would otherwise hold the process
    for ever (issue 25); its workflow task then times out and another worker takes it."""

    def __init__(self, window: timedelta) -> None:
        self.window = window.total_seconds() + STOP_MARGIN_S
        self.task = asyncio.current_task()
        self.expired = False
        self._timer: asyncio.TimerHandle | None = None

    def arm(self) -> None:
        if self._timer is None and not self.expired:
            self._timer = asyncio.get_running_loop().call_later(self.window, self._expire)

    def _expire(self) -> None:
        self.expired = True
        if self.task is not None and not self.task.done():
            self.task.cancel()
            self._timer = asyncio.get_running_loop().call_later(STOP_MARGIN_S, self._expire)

    def disarm(self) -> None:
        """The stop is over (or abandoned): no more cancelling. Returns the task to normal."""
        if self._timer is not None:
            self._timer.cancel()
        if self.expired and self.task is not None:
            while self.task.uncancel():
                pass


def drain_from(settings: Settings) -> timedelta:
    return timedelta(seconds=settings.worker.drain_seconds)


def workers_polling(workers: Sequence[Worker]) -> Check:
    async def check() -> str | None:
        if not workers:
            return "no worker started yet"
        stopped = [w.task_queue for w in workers if not w.is_running]
        return f"not polling: {', '.join(stopped)}" if stopped else None

    return check


def postgres_answers(dsn: str) -> Check:
    async def check() -> str | None:
        import asyncpg

        try:
            conn = await asyncpg.connect(dsn, timeout=PROBE_TIMEOUT_S)
            try:
                await within(conn.fetchval("SELECT 1"), PROBE_TIMEOUT_S)
            finally:
                await conn.close()
        except (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError):
            # Never the URL: it may carry a password.
            return "PostgreSQL does not answer"
        return None

    return check


def health_app(checks: Sequence[Check]) -> web.Application:
    async def livez(_: web.Request) -> web.Response:
        return web.Response(text="ok\n")

    async def readyz(_: web.Request) -> web.Response:
        for check in checks:
            problem = await check()
            if problem:
                return web.Response(status=503, text=problem + "\n")
        return web.Response(text="ready\n")

    app = web.Application()
    app.router.add_get("/livez", livez)
    app.router.add_get("/readyz", readyz)
    return app


async def start_health_server(exits: AsyncExitStack, checks: Sequence[Check],
                              host: str, port: int) -> None:
    runner = web.AppRunner(health_app(checks), access_log=None)
    await runner.setup()
    exits.push_async_callback(runner.cleanup)
    try:
        await web.TCPSite(runner, host, port).start()
    except OSError as exc:  # taken, or not this machine's address: one line, as dev says
        why = os.strerror(exc.errno).lower() if exc.errno else str(exc)
        raise SystemExit(f"TOLLGATE_HEALTH_PORT: cannot serve the health endpoints on "
                         f"{host}:{port} ({why})") from None


async def run_worker(queue: str, settings: Settings) -> None:
    """Serve ``queue`` (``main``, ``draft`` or ``all``) until SIGTERM/SIGINT, then drain."""
    from tollgate.runtime.workers import check_draft_environment

    if queue == "draft":
        check_draft_environment(settings)
    drain = drain_from(settings)
    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()
    watch = StopWatch(drain)

    def on_signal() -> None:
        stopping.set()
        watch.arm()

    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, on_signal)
    try:
        await _serve(queue, settings, drain, stopping)
    except asyncio.CancelledError:
        if not watch.expired:
            raise
        print("stopped past the drain window: a step still retrying was left to another "
              "worker", flush=True)
    finally:
        watch.disarm()
        for sig in STOP_SIGNALS:
            loop.remove_signal_handler(sig)


async def _serve(queue: str, settings: Settings, drain: timedelta,
                 stopping: asyncio.Event) -> None:
    from tollgate.runtime.workers import draft_worker, main_worker

    main = queue in ("main", "all")
    # The SDK's metrics are the main worker's to serve (the draft worker holds no port).
    with start_refusals(settings.temporal_address):
        client = await build_client(settings.temporal_address, settings.namespace,
                                    env=settings.env,
                                    runtime=sdk_runtime(settings.observability) if main else None)
    workers: list[Worker] = []
    checks: list[Check] = [workers_polling(workers)]
    if main and settings.dsn:
        checks.append(postgres_answers(settings.dsn))
    async with AsyncExitStack() as exits:
        if settings.worker.health_port:
            # Entered first, so it answers (503) until the workers have drained.
            await start_health_server(exits, checks, settings.worker.health_host,
                                      settings.worker.health_port)
        if main:
            # The review update's validator re-checks every decision's token (ADR 0026).
            warn_if_identity_unset(settings)
            verifier = await install_decision_verifier(settings)
            exits.callback(verifier.stop)
            with start_refusals(settings.temporal_address):  # the pool, its migrations
                workers.append(await exits.enter_async_context(
                    main_worker(client, settings, drain=drain)))
        if queue in ("draft", "all"):
            workers.append(await exits.enter_async_context(
                draft_worker(client, settings, drain=drain)))
        print(f"worker running ({queue}) against {settings.temporal_address}; "
              "SIGTERM or Ctrl-C drains and stops it", flush=True)
        await stopping.wait()
        print(f"stopping: no new tasks; activities in flight get {drain.total_seconds():g} s",
              flush=True)
