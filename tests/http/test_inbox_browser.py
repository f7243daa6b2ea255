"""The web inbox in a real browser (Debian's Chromium driven by Playwright): a reviewer logs in
with a dev token, sees only their tenant's reviews, approves one, and the event ends SUCCEEDED
with one message. A screenshot is kept in ``TOLLGATE_ARTIFACTS`` (default
``.tollgate/test-artifacts``). The whole request-info walk is tests/http/test_inbox_walk.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from contracts import EventState, FinalOutcome
from tests.eventually import eventually
from tests.http.browser import ARGS, CHROMIUM, artifacts, inbox_stack, log_in, needs_chromium
from tests.http.reviews_support import produce
from tollgate.dev.standins import StandIns
from tollgate.runtime.identity import issue_dev_token

pytestmark = pytest.mark.e2e


@needs_chromium
async def test_reviewer_approves_in_the_browser(
        dev_server: WorkflowEnvironment, database_url: str, standins: StandIns,
        tmp_path: Path) -> None:
    from playwright.async_api import async_playwright

    async with inbox_stack(dev_server, database_url, standins, tmp_path) as inbox:
        svc = inbox.svc
        mine = await produce(svc, inbox.api, standins, "acme")
        theirs = await produce(svc, inbox.api, standins, "globex")
        token = issue_dev_token(inbox.settings.state_dir, reviewer="lan.nguyen",
                                role="care_lead", tenant="acme")
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = await browser.new_page(viewport={"width": 412, "height": 915})
            await log_in(page, inbox.base, token)

            async def shown() -> int:
                count = await page.locator(f"a:text-is('{mine}')").count()
                if not count:
                    await page.reload()
                return count

            # Visibility follows the workflow's upsert.
            await eventually(shown, f"{mine} in the inbox", timeout=30, interval=0.2)
            assert await page.locator(f"a:text-is('{theirs}')").count() == 0
            shots = artifacts()
            await page.click(f"a:text-is('{mine}')")
            await page.fill("textarea[name=reason]", "checked against the record")
            await page.screenshot(path=str(shots / "inbox-review.png"), full_page=True)
            await page.click("button[value=approve]")
            assert "approve accepted" in await page.inner_text("#notice")
            await page.screenshot(path=str(shots / "inbox-approved.png"), full_page=True)
            await browser.close()
        outcome = await dev_server.client.get_workflow_handle(
            mine, result_type=FinalOutcome).result()
        assert outcome.state == EventState.SUCCEEDED
        raw = await svc.pool.fetchval("SELECT raw FROM outbox WHERE workflow_id = $1", mine)
        customer = json.loads(raw)["entity_id"]
        sent = [m for m in standins.messaging.messages() if m.get("recipient_ref") == customer]
        assert len(sent) == 1
