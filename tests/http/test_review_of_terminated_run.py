"""A review whose run was terminated by hand, read and decided through the API after its
workers have gone: the queue leaves it out (it was listed as waiting), its detail answers at
once saying the run was terminated and names no request to decide (it waited 10 s for a query,
then showed AWAITING_REVIEW), and a decision is refused 409 review_closed, changing nothing."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import httpx
import pytest
from temporalio.testing import WorkflowEnvironment

from adapters.postgres.store import create_pool
from tests.conftest import worker_settings
from tests.http.test_review_handshake import listed_ticket
from tests.http.test_reviews import produce, review_services, token
from tollgate.dev.standins import StandIns
from tollgate.http.app import create_app
from worker import draft_worker, main_worker

pytestmark = pytest.mark.e2e


async def test_a_review_terminated_by_hand_is_closed_in_the_api(
        dev_server: WorkflowEnvironment, database_url: str, standins: StandIns,
        tmp_path: Path) -> None:
    queue = f"tq-{uuid.uuid4().hex[:8]}"
    pool = await create_pool(database_url)
    svc = review_services(dev_server, pool, database_url, tmp_path, queue)
    wsettings = worker_settings(database_url, standins, tmp_path, queue)
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(svc)),
                                     base_url="http://tollgate.test") as api:
            lan = token(svc)
            async with main_worker(dev_server.client, wsettings), \
                    draft_worker(dev_server.client, wsettings):
                mine = await produce(svc, api, standins, "acme")
                ticket = await listed_ticket(api, lan, mine)
                await dev_server.client.get_workflow_handle(mine).terminate(reason="by hand")
            began = time.monotonic()
            queue_now = (await api.get("/v1/reviews", headers=lan)).json()
            detail = await api.get(f"/v1/reviews/{mine}", headers=lan)
            answer = await api.post(f"/v1/reviews/{mine}/decision", headers=lan, json={
                "decision": "approve", "reason": "late",
                "request_id": ticket["request_id"], "draft_version": ticket["draft_version"]})
            api.cookies.set("tollgate_token", lan["Authorization"][7:])  # the inbox's login
            page = await api.get(f"/inbox/review/{mine}")
            waited = time.monotonic() - began
    finally:
        await pool.close()
    assert mine not in [r["workflow_id"] for r in queue_now]
    assert detail.status_code == 200, detail.text
    assert (detail.json()["run_ended"], detail.json()["request_id"]) == ("terminated", None)
    assert answer.status_code == 409, answer.text
    assert (answer.json()["state"], answer.json()["reason_code"]) == ("CLOSED", "review_closed")
    assert page.status_code == 200 and "run terminated" in page.text
    assert 'name="request_id"' not in page.text  # no decision form
    assert waited < 8  # no wait for a worker that is not there
