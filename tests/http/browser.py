"""What the browser tests of the inbox share: Debian's Chromium (Playwright's own download is
not used), the HTTP service on a real port beside a real worker, and the reviewer's login."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from temporalio.testing import WorkflowEnvironment

from tests.conftest import worker_settings
from tests.http.conftest import http_settings
from tests.ports import free_port
from tollgate.config.settings import Settings
from tollgate.dev.standins import StandIns
from tollgate.http.app import build_services, create_app
from tollgate.http.deps import Services
from tollgate.runtime.workers import draft_worker, main_worker

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run"]
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="no Chromium on PATH: `apt-get install -y chromium` (.ci/run does "
    "it) to run the browser tests of the inbox")


@dataclass(frozen=True)
class Inbox:
    svc: Services
    settings: Settings
    api: httpx.AsyncClient  # the same app in process, for the producer's side
    base: str  # where the browser finds the inbox


@contextlib.asynccontextmanager
async def inbox_stack(dev_server: WorkflowEnvironment, database_url: str, standins: StandIns,
                      tmp_path: Path) -> AsyncIterator[Inbox]:
    """The HTTP service under uvicorn on a free loopback port, a main and a draft worker."""
    import uvicorn

    queue, port = f"tq-{uuid.uuid4().hex[:8]}", free_port()
    address = dev_server.client.service_client.config.target_host
    settings = http_settings(database_url, tmp_path, address, queue)
    wsettings = worker_settings(database_url, standins, tmp_path, queue)
    async with build_services(settings) as svc, \
            main_worker(dev_server.client, wsettings), draft_worker(dev_server.client, wsettings), \
            httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(svc)),
                              base_url="http://tollgate.test") as api:
        server = uvicorn.Server(uvicorn.Config(create_app(svc), host="127.0.0.1", port=port,
                                               log_level="warning", lifespan="off"))
        serving = asyncio.create_task(server.serve())
        try:
            yield Inbox(svc, settings, api, f"http://127.0.0.1:{port}")
        finally:
            server.should_exit = True
            with contextlib.suppress(asyncio.CancelledError):
                await serving


async def log_in(page: Any, base: str, token: str) -> None:
    await page.goto(f"{base}/inbox")
    await page.fill("textarea[name=token]", token)
    # Until the login's post and redirect have landed: a reload meanwhile (the tests' next step
    # often is one) meets a page being replaced ("Not attached to an active page", seen under
    # load in a CI run).
    async with page.expect_navigation():
        await page.click("button:text-is('Log in')")


def artifacts() -> Path:
    """Where screenshots are kept (``TOLLGATE_ARTIFACTS``, default .tollgate/test-artifacts)."""
    shots = Path(os.environ.get("TOLLGATE_ARTIFACTS", ".tollgate/test-artifacts"))
    shots.mkdir(parents=True, exist_ok=True)
    return shots
