"""The Web UI through the codec server: an operator sees the decoded draft; without the codec
the same page shows ciphertext and no personal data. Chromium from Debian, driven by
Playwright (never `playwright install`); skipped where no browser is installed."""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
import urllib.parse
from pathlib import Path

import pytest

from tests.ports import free_port
from tests.security.canary_support import FIRST_NAME, hits, run_canary
from tollgate.dev.endpoints import ui_url
from tollgate.dev.stack import DevStack
from tollgate.dev.stack_config import Ports

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(
    shutil.which("chromium") is None,
    reason="no `chromium` on PATH: apt-get install -y chromium (as .ci/run does)")]

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run"]


def chromium() -> str:
    pytest.importorskip("playwright", reason="the playwright package is not installed")
    return str(shutil.which("chromium"))


async def page_text(browser_path: str, url: str, shot: Path, *, block: str | None) -> str:
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=browser_path, args=CHROMIUM_ARGS)
        try:
            page = await browser.new_page(viewport={"width": 1600, "height": 2400})
            if block:  # the UI without a codec: its calls to the codec server never arrive
                await page.route(f"{block}/**", lambda route: route.abort())
            await page.goto(url)
            await page.wait_for_load_state("networkidle")
            await page.get_by_text("ProcessEvent").first.wait_for(timeout=30_000)
            await page.screenshot(path=str(shot), full_page=True)
            return await page.inner_text("body")
        finally:
            await browser.close()


async def test_the_ui_shows_the_draft_with_the_codec_and_no_personal_data_without(
    tmp_path: Path, database_url: str,
) -> None:
    browser = chromium()
    stack = DevStack(state_dir=tmp_path / "state", database_url=database_url, ports=Ports(
        temporal=free_port(), ui=free_port(), crm=0, messaging=0), ui_codec_token=True)
    await asyncio.to_thread(stack.start)
    try:
        wf_id, plain, _ = await run_canary(stack)
        assert stack.codec is not None
        started = json.loads(plain)["events"][0]["workflowExecutionStartedEventAttributes"]
        url = (f"{ui_url(stack)}/namespaces/default/workflows/"
               f"{urllib.parse.quote(wf_id, safe='')}/{started['originalExecutionRunId']}/history")
        decoded = await page_text(browser, url, tmp_path / "ui-with-codec.png", block=None)
        sealed = await page_text(browser, url, tmp_path / "ui-without-codec.png",
                                 block=stack.codec.url)
    finally:
        await asyncio.to_thread(stack.stop)
    # Screenshots stay under the test's tmp dir as the artifact of what the operator saw.
    # With the codec: the draft_message result, decoded (the UI shortens long lines).
    assert f'"draft":{{"message":"Hi {FIRST_NAME[:5]}' in decoded
    assert FIRST_NAME in decoded
    # Without it: payloads stay "binary/encrypted" (base64, as the UI prints metadata).
    assert base64.b64encode(b"binary/encrypted").decode() in sealed
    assert hits(sealed) == []
