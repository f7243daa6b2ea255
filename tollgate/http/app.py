"""The HTTP service: ``create_app`` builds the FastAPI app from shared services; ``run_server``
runs it on uvicorn with the outbox relay beside it (``tollgate serve``, and ``tollgate dev``).

The OpenAPI document is at ``/openapi.json``, browsable at ``/docs``: Swagger UI's files come
from the ``swagger-ui-bundle`` package and are served by the service itself, so the page loads
on a machine with no way out to a CDN (issue 29).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from adapters.postgres.outbox_admin import OutboxAdmin
from tollgate.config.settings import Settings
from tollgate.http import events, inbox, item_retry, items, reviews
from tollgate.http.deps import Services, TemporalLink
from tollgate.http.ratelimit import TenantRateLimiter
from tollgate.http.relay import RelayPolicy, run_relay


def create_app(svc: Services) -> FastAPI:
    app = FastAPI(
        title="Tollgate", version="1",
        description="Signed webhook intake (with an outbox) and the reviewer's API and inbox. "
                    "See docs/api.md.",
        docs_url=None, redoc_url=None,  # the CDN pages; /docs below is served from here
    )
    install_docs(app)
    app.state.services = svc
    app.include_router(events.router)
    app.include_router(reviews.router)
    app.include_router(inbox.router)
    app.include_router(items.router)
    app.include_router(item_retry.router)

    from temporalio.service import RPCError

    from tollgate.http import edge_errors

    edge_errors.install(app)  # 422 naming field and rule, never echoing the input
    install_server_spans(app)

    @app.exception_handler(RPCError)
    async def temporal_unavailable(_: Request, exc: RPCError) -> JSONResponse:
        # Temporal went away after the client connected: say so, and reconnect next time.
        svc.temporal.forget()
        return JSONResponse({"detail": "Temporal is unreachable; try again"}, status_code=503)

    async def health() -> JSONResponse:
        # A stalled relay (the oldest unsent row past the threshold) fails the probe: the
        # service still answers producers, but what it accepts reaches nobody (issue 25).
        totals = await OutboxAdmin(svc.pool).totals(datetime.now(UTC))
        oldest, limit = totals["oldest_age_s"], svc.settings.http.outbox_stall_s
        stalled = oldest is not None and oldest > limit
        return JSONResponse(
            {"ok": not stalled, "outbox_backlog": totals["depth"],
             "outbox_oldest_age_s": oldest, "outbox_moved_aside": totals["moved_aside"],
             **({"problem": f"the oldest unsent outbox row is over {limit:g} s old"}
                if stalled else {})},
            status_code=503 if stalled else 200)

    app.get("/healthz", tags=["service"])(health)
    app.get("/readyz", tags=["service"])(health)

    return app


def install_server_spans(app: FastAPI) -> None:
    """One SERVER span per request while tracing is on (docs/tracing.md, "HTTP intake")."""
    from tollgate.observability import tracing

    tracer = tracing.tracer("tollgate.http")
    if tracer is not None:
        from tollgate.http.server_spans import ServerSpans

        app.add_middleware(ServerSpans, tracer=tracer)


#: Where Swagger UI's own files are served from (not part of the OpenAPI document).
DOCS_ASSETS = "/docs/assets"


def install_docs(app: FastAPI) -> None:
    """``/docs``: Swagger UI over ``/openapi.json``, every file it loads from this service."""
    from fastapi.openapi.docs import get_swagger_ui_html
    from fastapi.responses import HTMLResponse
    from fastapi.staticfiles import StaticFiles
    from swagger_ui_bundle import swagger_ui_path

    app.mount(DOCS_ASSETS, StaticFiles(directory=swagger_ui_path), name="docs-assets")

    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json", title=f"{app.title} API",
            swagger_js_url=f"{DOCS_ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{DOCS_ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{DOCS_ASSETS}/favicon-32x32.png", oauth2_redirect_url=None)

    app.get("/docs", include_in_schema=False)(docs)


@contextlib.asynccontextmanager
async def build_services(settings: Settings) -> AsyncIterator[Services]:
    """The services of one process, from settings; the pool is closed on exit."""
    from adapters.postgres.pool import create_pool
    from tollgate.runtime.identity import verifier_from_settings

    if not settings.dsn:
        raise SystemExit("no PostgreSQL: set DATABASE_URL or start `tollgate dev`")
    http = settings.http
    pool = await create_pool(settings.dsn)
    try:
        yield Services(
            settings=settings, pool=pool, tenant_secrets=settings.tenant_secrets(),
            limiter=TenantRateLimiter(rate=http.intake_rate, burst=http.intake_burst),
            temporal=TemporalLink(settings.temporal_address, settings.namespace, settings.env),
            verifier=verifier_from_settings(settings),
            max_body=int(http.max_body),
        )
    finally:
        await pool.close()


async def serve(settings: Settings, host: str, port: int, *, deployed: bool = False) -> None:
    """Serve until cancelled, with the outbox relay and the reviewer notifier beside the app.
    ``deployed`` (``tollgate serve``): say at start what would keep notices from reviewers."""
    import httpx
    import uvicorn

    from adapters.notify.channels import LocalSink
    from adapters.postgres.notices import NoticeStore
    from tollgate.http.notifier import load_channels, run_notifier, warn_if_reviewers_unreached
    from tollgate.observability import tracing
    from tollgate.runtime.identity import warn_if_identity_unset

    # On before the app is built, so its requests are spans too (Temporal's client, made on
    # the first request, would turn it on only then).
    tracing.configure(settings.observability)
    warn_if_identity_unset(settings)  # before build_services makes the key (ADR 0086)
    async with build_services(settings) as svc, httpx.AsyncClient() as http:
        relay = asyncio.create_task(run_relay(
            svc.outbox, svc.temporal, settings.task_queue,
            RelayPolicy.from_settings(settings.http)))
        notify_file = settings.http.notify_file or settings.state_dir / "notify.json"
        channels = load_channels(notify_file, http, svc.tenant_secrets)
        if deployed:  # `tollgate dev`'s local sink and loopback links are its design
            warn_if_reviewers_unreached(channels, settings.http.public_url, host)
        public = settings.http.public_url or f"http://{host}:{port}"
        notifier = asyncio.create_task(run_notifier(
            NoticeStore(svc.pool), channels, LocalSink(settings.state_dir / "notices.jsonl"),
            public))
        config = uvicorn.Config(create_app(svc), host=host, port=port, log_level="warning",
                                lifespan="off")
        try:
            await uvicorn.Server(config).serve()
        finally:
            for task in (relay, notifier):
                await stop_task(task)


async def stop_task(task: asyncio.Task[None]) -> None:
    """Cancel a task started beside others (``tollgate dev``) and wait for its cleanup."""
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


def run_server(settings: Settings, host: str = "127.0.0.1", port: int | None = None) -> int:
    """``tollgate serve``: blocks until Ctrl-C or SIGTERM."""
    import signal

    from tollgate.runtime.entry import start_refusals

    port = port or settings.http.port
    # uvicorn stops gracefully on SIGTERM, then raises the signal again under the handler it
    # found: by default that ended the process there (exit 143), before the relay, the
    # notifier and the pool were stopped. As Ctrl-C's, the signal now unwinds them, and the
    # stop is exit 0 (ADR 0086).
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    # PostgreSQL not answering, a migration refused: one line (SystemExit), never a traceback.
    with start_refusals(settings.temporal_address), contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(settings, host, port, deployed=True))
    return 0
