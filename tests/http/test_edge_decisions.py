"""Decision posts with hostile paths and bodies, answered at the edge before PostgreSQL or
Temporal is asked: a 4xx naming what was wrong, never a 500."""

from __future__ import annotations

import httpx
import pytest

from tests.http.test_items import bearer
from tollgate.http.deps import Services

DECISION = {"decision": "approve", "reason": "ok", "request_id": "r-1", "draft_version": 1}


@pytest.mark.parametrize("workflow_id", ["%00", "event/acme/k%00", "a%01b"])
async def test_a_keyed_decision_for_an_id_that_cannot_be_a_review_is_404(
        api: httpx.AsyncClient, http_services: Services, workflow_id: str) -> None:
    # The key is kept by a route naming the workflow id: a NUL there reached PostgreSQL (500).
    headers = {**bearer(http_services, "ann", role="care_lead"), "Idempotency-Key": "k-edge"}
    answer = await api.post(f"/v1/reviews/{workflow_id}/decision", json=DECISION,
                            headers=headers)
    assert answer.status_code == 404, answer.text
    kept = await http_services.pool.fetchval(
        "SELECT count(*) FROM idempotency_keys WHERE key = 'k-edge'")
    assert kept == 0


@pytest.mark.parametrize(("body", "rule"), [
    (b'{"decision": "approve", "reason": ' + b"[" * 3000 + b"]" * 3000 + b"}", "too_deep"),
    (b'{"decision": "approve", "reason": "ok", "request_id": "r-1", "draft_version": '
     + b"9" * 5000 + b"}", "number_too_large"),
    (b'{"decision": "approve", "reason": "\xff\xfe", "request_id": "r-1", "draft_version": 1}',
     "not_json"),
])
@pytest.mark.parametrize("path", ["/v1/reviews/event/acme/k-1/decision", "/v1/items"])
async def test_a_body_json_cannot_read_is_422_naming_the_rule(
        api: httpx.AsyncClient, http_services: Services, body: bytes, rule: str,
        path: str) -> None:
    # FastAPI answered these 400 "There was an error parsing the body", naming nothing.
    answer = await api.post(path, content=body, headers={
        **bearer(http_services, "ann", role="care_lead"), "Content-Type": "application/json"})
    assert answer.status_code == 422, answer.text
    assert answer.json()["rule"] == rule
    assert answer.json()["field"] == ("$.draft_version" if rule == "number_too_large" else "$")
    assert "9999" not in answer.text
