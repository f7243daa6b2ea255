"""A decision that no worker takes: the review API answers 503 after its patience, never a 500
and never a wait without end (the SDK reports the cancelled update call as its own error, not
as a TimeoutError, which the API once missed)."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from temporalio.service import RPCError, RPCStatusCode
from temporalio.testing import WorkflowEnvironment

from adapters.postgres.store import create_pool
from tests.conftest import worker_settings
from tests.http.test_review_handshake import listed_ticket
from tests.http.test_reviews import produce, review_services, token
from tollgate.dev.standins import StandIns
from tollgate.http import review_service
from tollgate.http.app import create_app
from worker import draft_worker, main_worker

pytestmark = pytest.mark.e2e


@contextlib.asynccontextmanager
async def api_with_a_waiting_review(
        dev_server: WorkflowEnvironment, database_url: str, standins: StandIns,
        tmp_path: Path) -> AsyncIterator[tuple[httpx.AsyncClient, dict[str, str], str,
                                               dict[str, Any]]]:
    """The review API over ``dev_server`` with one acme review waiting in it, listed, and its
    workers gone: (the API, a reviewer's headers, the run's workflow id, its listed ticket)."""
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
            yield api, lan, mine, ticket
    finally:
        await pool.close()


async def test_a_decision_no_worker_takes_is_503(
        dev_server: WorkflowEnvironment, database_url: str, standins: StandIns,
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(review_service, "DECISION_TIMEOUT", timedelta(seconds=1))
    async with api_with_a_waiting_review(dev_server, database_url, standins, tmp_path) as (
            api, lan, mine, ticket):
        # The workers are gone; the run still waits for its review.
        answer = await api.post(f"/v1/reviews/{mine}/decision", headers=lan, json={
            "decision": "approve", "reason": "nobody home",
            "request_id": ticket["request_id"], "draft_version": ticket["draft_version"]})
    assert answer.status_code == 503, answer.text
    assert "no worker took the decision in time" in answer.text


async def test_a_review_still_reads_from_postgresql_when_temporal_went_away(
        dev_server: WorkflowEnvironment, database_url: str, standins: StandIns,
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async def gone(*_args: object, **_kwargs: object) -> None:
        raise RPCError("connection refused", RPCStatusCode.UNAVAILABLE, b"")

    async with api_with_a_waiting_review(dev_server, database_url, standins, tmp_path) as (
            api, lan, mine, _):
        # Temporal stops answering after the API connected: how the run stands and its
        # ticket are unknown, the record PostgreSQL holds is not.
        monkeypatch.setattr(review_service, "how_it_ended", gone)
        monkeypatch.setattr(review_service, "ticket", lambda *_a: asyncio.sleep(0))
        answer = await api.get(f"/v1/reviews/{mine}", headers=lan)
    assert answer.status_code == 200, answer.text
    assert answer.json()["state"] == "AWAITING_REVIEW" and answer.json()["draft"]
