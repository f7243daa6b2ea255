"""A decision that no worker takes: the review API answers 503 after its patience, never a 500
and never a wait without end (the SDK reports the cancelled update call as its own error, not
as a TimeoutError, which the API once missed)."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import pytest
from temporalio.service import RPCError, RPCStatusCode
from temporalio.testing import WorkflowEnvironment

from tests.http.review_no_worker_support import api_with_a_waiting_review
from tollgate.dev.standins import StandIns
from tollgate.http import review_service

pytestmark = pytest.mark.e2e


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
        monkeypatch.setattr(review_service, "ticket", lambda *_a, **_k: asyncio.sleep(0))
        answer = await api.get(f"/v1/reviews/{mine}", headers=lan)
    assert answer.status_code == 200, answer.text
    assert answer.json()["state"] == "AWAITING_REVIEW" and answer.json()["draft"]
