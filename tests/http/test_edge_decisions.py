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
