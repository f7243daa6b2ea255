"""A review whose run was terminated by hand, read and decided through the API after its
workers have gone: the queue leaves it out (it was listed as waiting), its detail answers at
once saying the run was terminated and names no request to decide (it waited 10 s for a query,
then showed AWAITING_REVIEW), and a decision is refused 409 review_closed, changing nothing."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from tests.http.review_no_worker_support import api_with_a_waiting_review
from tollgate.dev.standins import StandIns

pytestmark = pytest.mark.e2e


async def test_a_review_terminated_by_hand_is_closed_in_the_api(
        dev_server: WorkflowEnvironment, database_url: str, standins: StandIns,
        tmp_path: Path) -> None:
    async with api_with_a_waiting_review(dev_server, database_url, standins, tmp_path) as (
            api, lan, mine, ticket):
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
    assert mine not in [r["workflow_id"] for r in queue_now]
    assert detail.status_code == 200, detail.text
    assert (detail.json()["run_ended"], detail.json()["request_id"]) == ("terminated", None)
    assert answer.status_code == 409, answer.text
    assert (answer.json()["state"], answer.json()["reason_code"]) == ("CLOSED", "review_closed")
    assert page.status_code == 200 and "run terminated" in page.text
    assert 'name="request_id"' not in page.text  # no decision form
    assert waited < 8  # no wait for a worker that is not there


async def test_the_inbox_says_stopped_once_ops_close_recorded_the_end(
        dev_server: WorkflowEnvironment, database_url: str, standins: StandIns,
        tmp_path: Path) -> None:
    """After `ops close` the CLI's `review show` says `state STOPPED` alone; the inbox page
    and the API detail said `(run terminated, no outcome)` beside it (run_ended from Temporal)."""
    from adapters.postgres.pool import create_pool
    from adapters.postgres.run_close import RunCloses

    async with api_with_a_waiting_review(dev_server, database_url, standins, tmp_path) as (
            api, lan, mine, _ticket):
        await dev_server.client.get_workflow_handle(mine).terminate(reason="by hand")
        pool = await create_pool(database_url)
        try:
            closed = await RunCloses(pool).close(mine, ended="terminated", operator="lan.ops",
                                                 reason="terminated by hand")
        finally:
            await pool.close()
        assert closed.result == "closed"
        detail = await api.get(f"/v1/reviews/{mine}", headers=lan)
        api.cookies.set("tollgate_token", lan["Authorization"][7:])
        page = await api.get(f"/inbox/review/{mine}")
    assert page.status_code == 200
    assert '<strong id="state">STOPPED</strong>' in page.text
    assert "no outcome" not in page.text and 'id="ended"' not in page.text
    assert 'name="request_id"' not in page.text
    assert detail.status_code == 200, detail.text
    body = detail.json()
    assert (body["state"], body.get("run_ended"), body["request_id"]) == (
        "STOPPED", None, None)
    assert body["reason_code"] == "run_terminated"
