"""``Idempotency-Key`` on the decision API, on the real stack: an approval sent again with its
key gets the first 200, not the ``review_closed`` refusal a second decision would get, and the
workflow records one decision."""

from __future__ import annotations

import uuid

import httpx
import pytest
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

pytestmark = pytest.mark.e2e
__all__ = ["stack"]  # the fixture, shared with the review API's tests


async def test_an_approval_sent_again_with_its_key_is_the_first_answer(
        stack: tuple[Services, httpx.AsyncClient], standins: StandIns,
        dev_server: WorkflowEnvironment) -> None:
    svc, api = stack
    wf = await produce(svc, api, standins, "acme")
    lan = token(svc)
    await listed(api, lan, wf)
    detail = (await api.get(f"/v1/reviews/{wf}", headers=lan)).json()
    decision = {"decision": "approve", "reason": "checked", "request_id": detail["request_id"],
                "draft_version": detail["draft_version"]}
    keyed = {**lan, "Idempotency-Key": f"approve-{uuid.uuid4()}"}
    first = await api.post(f"/v1/reviews/{wf}/decision", json=decision, headers=keyed)
    assert first.status_code == 200, first.text
    outcome = await dev_server.client.get_workflow_handle(wf, result_type=FinalOutcome).result()
    assert outcome.state == EventState.SUCCEEDED

    again = await api.post(f"/v1/reviews/{wf}/decision", json=decision, headers=keyed)
    assert (again.status_code, again.json()) == (200, first.json())
    recorded = await svc.pool.fetchval(
        "SELECT count(*) FROM review_decisions WHERE workflow_id = $1", wf)
    assert recorded == 1
    other = await api.post(f"/v1/reviews/{wf}/decision", headers=keyed,
                           json={**decision, "reason": "changed my mind"})
    assert other.status_code == 409
    assert "idempotency_key_reused" in other.json()["detail"]
