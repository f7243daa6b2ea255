"""`tollgate dev`: the embedded stack plus the workers until SIGINT, SIGTERM or SIGHUP.

Each of the three stops it the same way (Ctrl-C, ``kill``, systemd, a container runtime and a
closing terminal all send one of them): the workers drain first (no new tasks; activities in
flight get ``TOLLGATE_DRAIN_SECONDS``, 10 s by default, to finish, then are cancelled and
Temporal hands them to the next worker), then the stand-ins, then Temporal and PostgreSQL. A
signal during start-up is kept and acted on as soon as the stack is up. A drain that outlasts
its window (a step whose retries never end) is abandoned (``StopWatch``), so a stop is always a
stop. What SIGKILL leaves behind, ``tollgate.dev.guard`` stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from contextlib import AsyncExitStack
from datetime import timedelta

from tollgate.codec.files import append_private
from tollgate.config.settings import Settings
from tollgate.dev.endpoints import stack_env, ui_url, write_endpoints
from tollgate.dev.stack import DevStack
from tollgate.dev.stack_config import ensure_free, free_port
from tollgate.runtime.health import StopWatch, drain_from

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def say(line: str) -> None:
    # After SIGHUP the terminal may be gone; a status line is not worth dying for.
    with contextlib.suppress(OSError):
        print(line, flush=True)


async def start_http_service(exits: AsyncExitStack, stack: DevStack,
                             settings: Settings) -> None:
    """The webhook intake, review API and inbox, with the outbox relay (``tollgate.http``)."""
    from tollgate.http.app import serve, stop_task

    stack.ports.http = stack.ports.http or free_port()
    ensure_free(stack.ports.http, "HTTP service", "TOLLGATE_HTTP_PORT")
    exits.push_async_callback(stop_task, asyncio.create_task(
        serve(settings, "127.0.0.1", stack.ports.http)))


def start_extra_workers(exits: AsyncExitStack, stack: DevStack, count: int,
                        drain: timedelta) -> list[int]:
    """``count`` more main workers, each ``python -m worker --queue main`` in its own process
    with the stack's environment, watched by the stack guard; stopped with SIGTERM (so they
    drain) when ``exits`` closes. Returns their pids (``tollgate dev`` prints them)."""
    import subprocess
    import sys

    # Only this process serves /metrics and the SDK's metrics (every worker would report the
    # same PostgreSQL figures; a second exporter on the same port would not start).
    env = {k: v for k, v in stack_env(stack).items()
           if k not in ("TOLLGATE_METRICS_PORT", "TOLLGATE_SDK_METRICS_PORT")}
    env["TOLLGATE_DRAIN_SECONDS"] = str(drain.total_seconds())
    log = append_private(stack.state_dir / "workers.log")  # 0600, as temporal.log
    exits.callback(log.close)
    procs: list[subprocess.Popen[bytes]] = []

    def stop_all() -> None:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(drain.total_seconds() + 5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            stack._forget(proc.pid)

    exits.push_async_callback(asyncio.to_thread, stop_all)
    for _ in range(count):
        proc = subprocess.Popen([sys.executable, "-m", "worker", "--queue", "main"],
                                env=env, stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        procs.append(proc)
        if stack._guard is not None:  # a killed `tollgate dev` takes them with it
            stack._guard.watch(proc.pid, signal.SIGTERM)
    return [p.pid for p in procs]


async def run_dev(stack: DevStack, workers: int = 1) -> None:
    from tollgate.dev.contacts_seed import seed_contacts
    from tollgate.observability.sdk_runtime import sdk_runtime
    from tollgate.ops.actions import ensure_sweep_schedule
    from tollgate.runtime.client import build_client
    from tollgate.runtime.entry import start_refusals
    from tollgate.runtime.identity import install_decision_verifier
    from tollgate.runtime.workers import draft_worker, main_worker

    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()
    received: list[str] = []
    # Grace for activities in flight at a stop (TOLLGATE_DRAIN_SECONDS, 10 s by default; a
    # send's own timeout is shorter), as `python -m worker` gives them.
    drain = drain_from(Settings.from_env(stack.env_vars()))
    watch = StopWatch(drain)

    def on_signal(sig: signal.Signals) -> None:
        if not received:
            say(f"{sig.name}: stopping (worker drains, then stand-ins, Temporal, PostgreSQL)")
        received.append(sig.name)
        stopping.set()
        watch.arm()

    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, on_signal, sig)
    try:
        await asyncio.to_thread(stack.start)
        if stopping.is_set():
            return
        stack.ports.metrics = stack.ports.metrics or free_port()
        ensure_free(stack.ports.metrics, "metrics exporter", "TOLLGATE_METRICS_PORT")
        stack.ports.sdk_metrics = stack.ports.sdk_metrics or free_port()
        ensure_free(stack.ports.sdk_metrics, "Temporal SDK metrics", "TOLLGATE_SDK_METRICS_PORT")
        settings = Settings.from_env(
            {**stack_env(stack), "TOLLGATE_METRICS_PORT": str(stack.ports.metrics),
             "TOLLGATE_SDK_METRICS_PORT": str(stack.ports.sdk_metrics)})
        # With TEMPORAL_ADDRESS or DATABASE_URL set, a server that does not answer (or, for
        # PostgreSQL, refuses) is said in the CLI's line and code, not as an unexpected error.
        with start_refusals(settings.temporal_address):
            client = await build_client(settings.temporal_address, env=settings.env,
                                        runtime=sdk_runtime(settings.observability))
        await install_decision_verifier(settings)  # the review validator checks tokens
        assert settings.dsn
        with start_refusals(settings.temporal_address):  # the first pool (ADR 0090)
            await seed_contacts(settings.dsn)  # the example tenants' hotlines (ADR 0039)
        async with AsyncExitStack() as group:
            # Entered first, so it stops after the workers have drained (the exit is LIFO).
            await start_http_service(group, stack, settings)
            await group.enter_async_context(main_worker(client, settings, drain=drain))
            await group.enter_async_context(draft_worker(client, settings, drain=drain))
            extra = (start_extra_workers(group, stack, workers - 1, drain) if workers > 1
                     else [])
            await ensure_sweep_schedule(client, settings.task_queue)
            say(f"Temporal   {stack.temporal_address}   Web UI {ui_url(stack)}")
            if stack.codec is not None:
                say(f"codec      {stack.codec.url} (token in {stack.state_dir / 'codec-token'})")
            say(f"PostgreSQL {'embedded' if stack._pg else 'DATABASE_URL'}")
            assert stack.standins is not None
            say(f"CRM        {stack.standins.crm_url}   messaging {stack.standins.messaging_url}"
                f"   helpdesk {stack.standins.helpdesk_url}")
            say(f"HTTP       http://127.0.0.1:{stack.ports.http}   inbox /inbox, API /docs")
            say(f"metrics    http://127.0.0.1:{stack.ports.metrics}/metrics   Temporal SDK "
                f"http://127.0.0.1:{stack.ports.sdk_metrics}/metrics")
            if extra:
                say(f"workers    {workers} main workers: this process and pids "
                    f"{', '.join(map(str, extra))} (log {stack.state_dir / 'workers.log'})")
            write_endpoints(stack, serving=True)  # now with the HTTP service and metrics
            say(f"worker running; Ctrl-C (or SIGTERM/SIGHUP) stops everything started here. "
                f"Data: {stack.state_dir}")
            await stopping.wait()
            # Leaving the block shuts the workers down: they drain before anything else stops.
    except asyncio.CancelledError:
        if not watch.expired:
            raise
        say("drain window passed with a step still retrying: stopping without it")
    finally:
        watch.disarm()
        await asyncio.to_thread(stack.stop)
        for sig in STOP_SIGNALS:
            loop.remove_signal_handler(sig)
    if received:
        say("stopped")
