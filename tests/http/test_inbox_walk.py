"""A reviewer walks the web inbox on a phone in Chromium, against a real worker (issue 28 item 5):
asks a question, sees the new version with its word diff and the evidence, asks again (the
third version keeps the first answer and adds the second), approves, and exactly one message
reaches the messaging stand-in, the version they approved. On the way: a reload after a decision
sends nothing again; the page is text only (no script, image or frame, and a policy that forbids
them); a form with a forged CSRF value or posted from another site decides nothing; and at
390 px nothing scrolls sideways, even with the longest event key the contract allows."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from temporalio.testing import WorkflowEnvironment

from contracts import EventState, FinalOutcome
from tests.conftest import fresh_key
from tests.eventually import eventually
from tests.http.browser import ARGS, CHROMIUM, Inbox, artifacts, inbox_stack, log_in, needs_chromium
from tests.http.conftest import signed_headers
from tollgate.dev.demo import care_due
from tollgate.dev.standins import StandIns
from tollgate.http.relay import relay_once
from tollgate.runtime.identity import issue_dev_token

pytestmark = pytest.mark.e2e
PHONE = {"width": 390, "height": 844}
#: What a page of the inbox must not hold for it to stay text: nothing that runs or loads.
ACTIVE = "script, img, iframe, frame, object, embed, link, svg, video, audio, [style*=url]"


async def post_event(inbox: Inbox, standins: StandIns, customer: str) -> str:
    """A CARE_DUE event over the webhook with a key of 120 characters (the contract allows 128
    and the event id adds 4), relayed to Temporal; its workflow id."""
    standins.crm.upsert("acme", customer, first_name="Lan", pet_name="Miu",
                        consent_messaging=True)
    key = fresh_key(f"care-{customer}").ljust(120, "x")
    body = json.dumps(care_due("acme", customer, key, now=datetime.now(UTC))).encode()
    answer = await inbox.api.post("/v1/events", content=body,
                                  headers=signed_headers(body, "acme"))
    assert answer.status_code == 202, answer.text
    while await relay_once(inbox.svc.outbox, inbox.svc.temporal,
                           inbox.settings.task_queue) is not None:
        pass
    return str(answer.json()["workflow_id"])


async def fits_a_phone(page: Any) -> None:
    """No sideways scroll, and every control wholly on screen at a legible size."""
    wide = await page.evaluate("[document.documentElement.scrollWidth, innerWidth]")
    assert wide[0] <= wide[1], f"the page is {wide[0]} px wide on a {wide[1]} px screen"
    for control in await page.locator("button, textarea, input:not([type=hidden])").all():
        box = await control.bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], box
        size = await control.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")
        assert size >= 16, f"{size}px text in a control: phones zoom in on it"


async def text_only(page: Any, response: Any) -> None:
    assert await page.locator(ACTIVE).count() == 0
    policy = (await response.all_headers())["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src" not in policy


async def version(page: Any, review_url: str, wanted: int) -> None:
    """Open the review until it shows draft ``wanted`` (the worker drafts it meanwhile)."""
    async def shown() -> str:
        await page.goto(review_url)
        return str(await page.locator("h2", has_text="Draft v").inner_text())

    await eventually(shown, f"draft v{wanted} on the page", until=lambda h: h == f"Draft v{wanted}",
                     timeout=30, interval=0.3)


async def decide(page: Any, decision: str, reason: str) -> str:
    await page.fill("textarea[name=reason]", reason)
    await page.click(f"button[value={decision}]")
    return str(await page.inner_text("#notice"))


async def refused_forms(page: Any, review_url: str) -> None:
    """A forged CSRF value, and a form posted from another site with the page's real value:
    both 403, and the review still waits with no decision recorded."""
    form = page.locator("form.decide")
    await form.locator("input[name=csrf]").evaluate("e => { e.value = 'forged' }")
    await form.locator("textarea[name=reason]").fill("looks fine")
    async with page.expect_navigation() as forged:
        await form.locator("button[value=approve]").click()
    assert (await forged.value).status == 403
    await page.goto(review_url)

    fields = {name: await form.locator(f"input[name={name}]").get_attribute("value")
              for name in ("csrf", "request_id", "draft_version")}
    hidden = "".join(f'<input type="hidden" name="{k}" value="{v}">' for k, v in fields.items())
    elsewhere = ("<form method=post action='" + review_url + "/decision'>" + hidden +
                 "<input name=reason value=x><button name=decision value=approve>go</button>"
                 "</form>")
    await page.route("http://elsewhere.test/**", lambda route: route.fulfill(
        body=elsewhere, content_type="text/html"))
    await page.goto("http://elsewhere.test/")
    async with page.expect_navigation() as crossed:
        await page.click("button")
    # SameSite=Strict: the browser sends neither the session nor the CSRF cookie.
    assert (await crossed.value).status == 403
    await page.goto(review_url)
    assert await page.inner_text("#state") == "AWAITING_REVIEW"
    assert "none" in await page.inner_text("h2:text-is('Decisions') + p")


@needs_chromium
async def test_a_reviewer_asks_twice_sees_each_diff_and_approves_one_message(
        dev_server: WorkflowEnvironment, database_url: str, standins: StandIns,
        tmp_path: Path) -> None:
    from playwright.async_api import async_playwright

    customer = fresh_key("C")
    async with inbox_stack(dev_server, database_url, standins, tmp_path) as inbox:
        workflow_id = await post_event(inbox, standins, customer)
        token = issue_dev_token(inbox.settings.state_dir, reviewer="lan.nguyen",
                                role="care_lead", tenant="acme")
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = await browser.new_page(viewport=PHONE)
            await log_in(page, inbox.base, token)
            link = page.locator(f"a:text-is('{workflow_id}')")

            async def listed() -> int:
                await page.reload()
                return int(await link.count())

            await eventually(listed, "the review in the list", timeout=30, interval=0.3)
            await fits_a_phone(page)
            async with page.expect_navigation() as opened:
                await link.click()
            await text_only(page, await opened.value)
            await fits_a_phone(page)
            review_url = page.url
            await refused_forms(page, review_url)
            first = await page.inner_text("#draft")
            assert await page.locator("#diff").count() == 0

            assert "request_info accepted" in await decide(page, "request_info", "When is it due?")
            # A phone's pull-to-refresh: the answer was reached by GET, so nothing is sent again
            # (the decisions list below has no second, refused request) and the notice is gone.
            await page.reload()
            assert await page.locator("#notice").count() == 0
            await version(page, review_url, 2)
            assert await page.inner_text("#answering") == "You asked: “When is it due?”"
            added = await page.locator("#diff ins").all_inner_texts()
            assert added and " ".join(added).startswith("The date is ")
            # Nothing of v1 was dropped: every word the reviewer read is still there.
            assert await page.locator("#diff del").count() == 0
            assert (await page.inner_text("#draft")).startswith(first)
            evidence = await page.inner_text("#evidence")
            assert "crm.first_name = “Lan”" in evidence and "CRM customer record" in evidence
            assert "event.due_at = " in evidence and "event from crm-scheduler" in evidence
            await fits_a_phone(page)

            assert "request_info accepted" in await decide(page, "request_info",
                                                           "Which pet is it for?")
            await version(page, review_url, 3)
            # v3 answers both questions in the order asked: v2's date answer stays (nothing is
            # struck out) and the pet's answer is what the diff adds.
            assert await page.locator("#diff del").count() == 0
            added = " ".join(await page.locator("#diff ins").all_inner_texts())
            assert "Miu's care" in added and "date" not in added
            approved = await page.inner_text("#draft")
            assert approved.startswith(first) and approved.index("The date is ") < approved.index(
                "Miu's care")
            await page.screenshot(path=str(artifacts() / "inbox-walk-v3.png"), full_page=True)
            await fits_a_phone(page)

            assert "approve accepted" in await decide(page, "approve", "answers both")
            decisions = await page.locator("h2:text-is('Decisions') + ul li").all_inner_texts()
            assert [d.split(" by ")[0][17:] for d in decisions] == [
                "request_info", "request_info", "approve"]
            assert all(": accepted · " in d for d in decisions), decisions
            await fits_a_phone(page)
            await browser.close()
        outcome = await dev_server.client.get_workflow_handle(
            workflow_id, result_type=FinalOutcome).result()
    assert outcome.state == EventState.SUCCEEDED
    sent = [m for m in standins.messaging.messages() if m.get("recipient_ref") == customer]
    assert [m["body"] for m in sent] == [approved]
