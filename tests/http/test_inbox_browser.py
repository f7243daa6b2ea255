"""The web inbox in a real browser (Debian's Chromium driven by Playwright): a reviewer logs in
with a dev token, sees only their tenant's reviews, approves one, and the event ends SUCCEEDED
with one message. A screenshot is kept in ``TOLLGATE_ARTIFACTS`` (default
``.tollgate/test-artifacts``)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import uuid
from pathlib import Path

import httpx
import pytest
from temporalio.testing import WorkflowEnvironment

from contracts import EventState, FinalOutcome
from tests.conftest import worker_settings
from tests.eventually import eventually
from tests.http.conftest import http_settings
from tests.http.test_reviews import produce
from tollgate.dev.stack import free_port
from tollgate.dev.standins import StandIns
from tollgate.http.app import build_services, create_app
from tollgate.http.identity import issue_dev_token
from worker import draft_worker, main_worker

pytestmark = pytest.mark.e2e
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run"]


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on PATH: `apt-get install -y "
                    "chromium` (.ci/run does it) to run the browser test of the inbox")
async def test_reviewer_approves_in_the_browser(
        dev_server: WorkflowEnvironment, database_url: str, standins: StandIns,
        tmp_path: Path) -> None:
    import uvicorn
    from playwright.async_api import async_playwright

    queue, port = f"tq-{uuid.uuid4().hex[:8]}", free_port()
    address = dev_server.client.service_client.config.target_host
    settings = http_settings(database_url, tmp_path, address, queue)
    wsettings = worker_settings(database_url, standins, tmp_path, queue)
    async with build_services(settings) as svc, \
            main_worker(dev_server.client, wsettings), draft_worker(dev_server.client, wsettings):
        server = uvicorn.Server(uvicorn.Config(create_app(svc), host="127.0.0.1", port=port,
                                               log_level="warning", lifespan="off"))
        serving = asyncio.create_task(server.serve())
        try:
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(svc)),
                                         base_url="http://tollgate.test") as api:
                mine = await produce(svc, api, standins, "acme")
                theirs = await produce(svc, api, standins, "globex")
            token = issue_dev_token(settings.state_dir, reviewer="lan.nguyen", role="care_lead",
                                    tenant="acme")
            async with async_playwright() as pw:
                browser = await pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                page = await browser.new_page(viewport={"width": 412, "height": 915})
                base = f"http://127.0.0.1:{port}"
                await page.goto(f"{base}/inbox")
                await page.fill("textarea[name=token]", token)
                await page.click("button:text-is('Log in')")
                async def shown() -> int:
                    count = await page.locator(f"a:text-is('{mine}')").count()
                    if not count:
                        await page.reload()
                    return count

                # Visibility follows the workflow's upsert.
                await eventually(shown, f"{mine} in the inbox", timeout=30, interval=0.2)
                assert await page.locator(f"a:text-is('{theirs}')").count() == 0
                shots = Path(os.environ.get("TOLLGATE_ARTIFACTS", ".tollgate/test-artifacts"))
                shots.mkdir(parents=True, exist_ok=True)
                await page.click(f"a:text-is('{mine}')")
                await page.fill("textarea[name=reason]", "checked against the record")
                await page.screenshot(path=str(shots / "inbox-review.png"), full_page=True)
                await page.click("button[value=approve]")
                assert "approve accepted" in await page.inner_text("#notice")
                await page.screenshot(path=str(shots / "inbox-approved.png"), full_page=True)
                await browser.close()
        finally:
            server.should_exit = True
            with contextlib.suppress(asyncio.CancelledError):
                await serving
        outcome = await dev_server.client.get_workflow_handle(
            mine, result_type=FinalOutcome).result()
        assert outcome.state == EventState.SUCCEEDED
        raw = await svc.pool.fetchval("SELECT raw FROM outbox WHERE workflow_id = $1", mine)
        customer = json.loads(raw)["entity_id"]
        sent = [m for m in standins.messaging.messages() if m.get("recipient_ref") == customer]
        assert len(sent) == 1
