"""A decision through the review API or the inbox is one message to the workflow (issue 33):
`GET /v1/reviews` carries each waiting run's ticket (request id, draft version), a decision
names it and goes out as the ``review`` update with no ``review_ticket`` query first; a stale
ticket is refused by the workflow's validator as before (409); the inbox page, which reads the
review to show the draft, posts what it showed (role included), so the decision asks nothing."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from temporalio.testing import WorkflowEnvironment

from tests.eventually import eventually
from tests.http.test_reviews import produce, stack
from tests.review_queries import QueryCounter, counting
from tollgate.dev.standins import StandIns
from tollgate.http.deps import Services
from tollgate.http.identity import issue_dev_token

pytestmark = pytest.mark.e2e
__all__ = ["stack"]  # the fixture, shared with the review API's tests


async def counted(svc: Services) -> QueryCounter:
    """Count the queries the service sends from now on."""
    client, queries = counting(await svc.temporal.client())
    svc.temporal._client = client  # the link's connection, counted
    return queries


async def listed_ticket(api: httpx.AsyncClient, headers: dict[str, str], wanted: str,
                        version: int = 1) -> dict[str, Any]:
    async def row() -> dict[str, Any] | None:
        rows = (await api.get("/v1/reviews", headers=headers)).json()
        return next((r for r in rows if r["workflow_id"] == wanted), None)

    found: dict[str, Any] = await eventually(
        row, f"{wanted} listed with the ticket of draft v{version}", timeout=20, interval=0.1,
        until=lambda r: r is not None and r["draft_version"] == version)
    return found


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
