"""The review API with real identity: a producer posts over HTTP, the relay starts the workflow
on the real dev server, and reviewers act with tokens; roles and tenant come from the token."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from temporalio.testing import WorkflowEnvironment

from contracts import EventState, FinalOutcome
from tests.http.reviews_support import (
    listed,
    produce,
    stack,
    token,
)
from tollgate.dev.standins import StandIns
from tollgate.http.deps import Services
from tollgate.http.inbox import CSRF_COOKIE
from tollgate.runtime.identity import (
    DEV_AUDIENCE,
    DEV_ISSUER,
    issue_dev_token,
)

__all__ = ["stack"]  # the fixture, from reviews_support.py

pytestmark = pytest.mark.e2e


async def test_reviewer_sees_own_tenant_only_and_approval_sends_one_message(
        stack: tuple[Services, httpx.AsyncClient], standins: StandIns,
        dev_server: WorkflowEnvironment) -> None:
    svc, api = stack
    mine = await produce(svc, api, standins, "acme")
    theirs = await produce(svc, api, standins, "globex")
    lan, globex = token(svc), token(svc, "bao.le", tenant="globex")
    ids = await listed(api, lan, mine)
    assert theirs not in ids
    assert (await api.get(f"/v1/reviews/{theirs}", headers=lan)).status_code == 404

    detail = (await api.get(f"/v1/reviews/{mine}", headers=lan)).json()
    assert detail["state"] == "AWAITING_REVIEW" and detail["draft"]
    assert detail["policy_version"] and detail["sources"]
    decision = {"decision": "approve", "reason": "checked", "request_id": detail["request_id"],
                "draft_version": detail["draft_version"]}
    crossing = await api.post(f"/v1/reviews/{mine}/decision", json=decision, headers=globex)
    assert crossing.status_code == 403
    assert crossing.json()["reason_code"] == "cross_tenant"
    stale = await api.post(f"/v1/reviews/{mine}/decision", headers=lan,
                           json={**decision, "draft_version": detail["draft_version"] + 1})
    assert stale.status_code == 409 and stale.json()["reason_code"]

    approved = await api.post(f"/v1/reviews/{mine}/decision", json=decision, headers=lan)
    assert approved.status_code == 200, approved.text
    outcome = await dev_server.client.get_workflow_handle(
        mine, result_type=FinalOutcome).result()
    assert outcome.state == EventState.SUCCEEDED
    customer = json.loads(await svc.pool.fetchval(
        "SELECT raw FROM outbox WHERE workflow_id = $1", mine))["entity_id"]
    assert sum(m.get("recipient_ref") == customer for m in standins.messaging.messages()) == 1
    again = await api.post(f"/v1/reviews/{mine}/decision", json=decision, headers=lan)
    assert again.status_code == 409 and again.json()["reason_code"] == "review_closed"


def foreign_token(**claims: Any) -> str:
    now = int(time.time())
    body = {"iss": DEV_ISSUER, "aud": DEV_AUDIENCE, "sub": "mallory", "roles": ["care_lead"],
            "tenant": "acme", "iat": now, "exp": now + 600, **claims}
    return jwt.encode(body, ec.generate_private_key(ec.SECP256R1()), algorithm="ES256")


async def test_tokens_that_prove_nothing_are_401(stack: tuple[Services, httpx.AsyncClient]
                                                 ) -> None:
    svc, api = stack
    assert (await api.get("/v1/reviews")).status_code == 401
    forged = await api.get("/v1/reviews", headers={"Authorization": f"Bearer {foreign_token()}"})
    assert forged.status_code == 401
    expired = issue_dev_token(svc.settings.state_dir, reviewer="lan.nguyen", role="care_lead",
                              tenant="acme", ttl_s=-10)
    late = await api.get("/v1/reviews", headers={"Authorization": f"Bearer {expired}"})
    assert late.status_code == 401 and "token_expired" in late.json()["detail"]


async def inbox_login(api: httpx.AsyncClient, svc: Services, tenant: str = "acme") -> str:
    """Log in through the form; returns the CSRF value the pages carry."""
    page = await api.get("/inbox/login")
    csrf = page.cookies[CSRF_COOKIE]
    raw = issue_dev_token(svc.settings.state_dir, reviewer="lan.nguyen", role="care_lead",
                          tenant=tenant)
    answer = await api.post("/inbox/login", data={"token": raw, "csrf": csrf})
    assert answer.status_code == 303
    return csrf


async def test_inbox_shows_draft_as_text_and_needs_csrf_to_decide(
        stack: tuple[Services, httpx.AsyncClient], standins: StandIns,
        dev_server: WorkflowEnvironment) -> None:
    svc, api = stack
    assert (await api.get("/inbox")).status_code == 303  # to the login page
    # A name with a quote: the offline drafter only copies names that look like names, so the
    # HTML-significant character that reaches the draft is the apostrophe.
    mine = await produce(svc, api, standins, "acme", first_name="Lan O'Brien")
    csrf = await inbox_login(api, svc)
    await listed(api, {}, mine)  # the inbox's cookie stands in for the bearer header
    listing = await api.get("/inbox")
    assert mine in listing.text
    page = await api.get(f"/inbox/review/{mine}")
    assert "Lan O&#39;Brien" in page.text and "Lan O'Brien" not in page.text
    assert "script-src" not in page.headers["content-security-policy"]
    detail = (await api.get(f"/v1/reviews/{mine}")).json()
    form = {"decision": "approve", "reason": "ok", "request_id": detail["request_id"],
            "draft_version": str(detail["draft_version"])}
    forged = await api.post(f"/inbox/review/{mine}/decision", data={**form, "csrf": "guess"})
    assert forged.status_code == 403
    assert (await api.get(f"/v1/reviews/{mine}")).json()["state"] == "AWAITING_REVIEW"
    done = await api.post(f"/inbox/review/{mine}/decision", data={**form, "csrf": csrf})
    # Post/Redirect/Get: the answer is the review page again, its notice read once.
    assert done.status_code == 303, done.text
    assert done.headers["location"] == f"/inbox/review/{mine}"
    answered = await api.get(done.headers["location"])
    assert "approve accepted" in answered.text
    assert "approve accepted" not in (await api.get(done.headers["location"])).text
    outcome = await dev_server.client.get_workflow_handle(
        mine, result_type=FinalOutcome).result()
    assert outcome.state == EventState.SUCCEEDED


async def test_api_decision_ignores_the_inbox_cookie(stack: tuple[Services, httpx.AsyncClient]
                                                     ) -> None:
    svc, api = stack
    await inbox_login(api, svc)
    assert (await api.get("/v1/reviews")).status_code == 200
    decision = {"decision": "approve", "reason": "x", "request_id": "r", "draft_version": 1}
    sent = await api.post("/v1/reviews/event/acme/k-1/decision", json=decision)
    assert sent.status_code == 401
