"""A decision through the review API or the inbox is one message to the workflow (issue 33):
`GET /v1/reviews` carries each waiting run's ticket (request id, draft version), a decision
names it and goes out as the ``review`` update with no ``review_ticket`` query first; a stale
ticket is refused by the workflow's validator as before (409); the inbox page, which reads the
review to show the draft, posts what it showed (role included), so the decision asks nothing."""

from __future__ import annotations

import re

import httpx
import pytest
from temporalio.testing import WorkflowEnvironment

from contracts import EventState, FinalOutcome
from tests.eventually import eventually
from tests.http.review_handshake_support import listed_ticket
from tests.http.reviews_support import (
    produce,
    stack,
    token,
)
from tests.review_queries import QueryCounter, counting
from tollgate.dev.standins import StandIns
from tollgate.http.deps import Services
from tollgate.http.inbox import CSRF_COOKIE
from tollgate.runtime.identity import issue_dev_token

pytestmark = pytest.mark.e2e
__all__ = ["stack"]  # the fixture, shared with the review API's tests


async def counted(svc: Services) -> QueryCounter:
    """Count the queries the service sends from now on."""
    client, queries = counting(await svc.temporal.client())
    svc.temporal._client = client  # the link's connection, counted
    return queries


async def test_decision_from_the_listing_needs_no_query_and_a_stale_one_is_refused(
        stack: tuple[Services, httpx.AsyncClient], standins: StandIns,
        dev_server: WorkflowEnvironment) -> None:
    svc, api = stack
    lan = token(svc)
    mine = await produce(svc, api, standins, "acme")
    queries = await counted(svc)
    first = await listed_ticket(api, lan, mine)
    asked = await api.post(f"/v1/reviews/{mine}/decision", headers=lan, json={
        "decision": "request_info", "reason": "Is the due date the 12th?",
        "request_id": first["request_id"], "draft_version": first["draft_version"]})
    assert asked.status_code == 200, asked.text
    second = await listed_ticket(api, lan, mine, version=2)
    assert second["request_id"] != first["request_id"]

    stale = await api.post(f"/v1/reviews/{mine}/decision", headers=lan, json={
        "decision": "approve", "reason": "from an old listing",
        "request_id": first["request_id"], "draft_version": first["draft_version"]})
    assert stale.status_code == 409
    assert stale.json()["reason_code"] in ("wrong_request", "stale_draft_version")
    approved = await api.post(f"/v1/reviews/{mine}/decision", headers=lan, json={
        "decision": "approve", "reason": "v2 is right",
        "request_id": second["request_id"], "draft_version": second["draft_version"]})
    assert approved.status_code == 200, approved.text
    outcome = await dev_server.client.get_workflow_handle(
        mine, result_type=FinalOutcome).result()
    assert outcome.state == EventState.SUCCEEDED
    assert queries.names["review_ticket"] == 0


async def test_inbox_decision_posts_what_the_page_showed_and_asks_nothing(
        stack: tuple[Services, httpx.AsyncClient], standins: StandIns,
        dev_server: WorkflowEnvironment) -> None:
    svc, api = stack
    mine = await produce(svc, api, standins, "acme")
    # A token whose first role may not approve: the page names the one the review needs.
    raw = issue_dev_token(svc.settings.state_dir, reviewer="lan.nguyen", role="trainee",
                          tenant="acme", roles=("care_lead",))
    csrf = (await api.get("/inbox/login")).cookies[CSRF_COOKIE]
    assert (await api.post("/inbox/login", data={"token": raw, "csrf": csrf})).status_code == 303
    await listed_ticket(api, {}, mine)
    page = (await api.get(f"/inbox/review/{mine}")).text
    form = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', page))
    assert form["role"] == "care_lead" and form["request_id"] and form["draft_version"] == "1"
    queries = await counted(svc)
    done = await api.post(f"/inbox/review/{mine}/decision",
                          data={**form, "csrf": csrf, "decision": "approve", "reason": "ok"})
    assert done.status_code == 303, done.text
    outcome = await dev_server.client.get_workflow_handle(
        mine, result_type=FinalOutcome).result()
    assert outcome.state == EventState.SUCCEEDED
    assert queries.names["review_ticket"] == 0


async def test_several_roles_and_none_named_ask_the_review_which_it_needs(
        stack: tuple[Services, httpx.AsyncClient], standins: StandIns,
        dev_server: WorkflowEnvironment) -> None:
    svc, api = stack
    mine = await produce(svc, api, standins, "acme")
    both = {"Authorization": "Bearer " + issue_dev_token(
        svc.settings.state_dir, reviewer="lan.nguyen", role="trainee", tenant="acme",
        roles=("care_lead",))}
    await eventually(lambda: api.get(f"/v1/reviews/{mine}", headers=both),
                     f"{mine} in review", until=lambda r: r.json().get("request_id"))
    ticket = (await api.get(f"/v1/reviews/{mine}", headers=both)).json()
    queries = await counted(svc)
    approved = await api.post(f"/v1/reviews/{mine}/decision", headers=both, json={
        "decision": "approve", "reason": "ok", "request_id": ticket["request_id"],
        "draft_version": ticket["draft_version"]})
    assert approved.status_code == 200, approved.text
    assert queries.names["review_ticket"] == 1
