"""A decision nobody's worker takes: `tollgate review approve` says so in one line and exits 3
after its patience, instead of waiting forever (the HTTP API answers 503 the same way)."""

from __future__ import annotations

import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from tests.conftest import fresh_key, signed_event, start, wait_review, worker_settings
from tollgate.cli.review_decide import review_decide
from tollgate.config.settings import Settings
from tollgate.dev.standins import StandIns
from tollgate.runtime.exits import Exit, Failure
from tollgate.runtime.workers import draft_worker, main_worker


async def test_a_decision_no_worker_takes_ends_in_one_line(
        dev_server: WorkflowEnvironment, database_url: str, standins: StandIns,
        tmp_path: Path) -> None:
    queue = f"tq-{uuid.uuid4().hex[:8]}"
    settings = worker_settings(database_url, standins, tmp_path, queue)
    customer = fresh_key("C")
    standins.crm.upsert("acme", customer, first_name="Lan", pet_name="Miu",
                        consent_messaging=True)
    async with main_worker(dev_server.client, settings), \
            draft_worker(dev_server.client, settings):
        handle = await start(dev_server.client, queue, signed_event(customer))
        shown = await wait_review(handle)
    # The workers are gone; the run still waits for its review.
    with pytest.raises(Failure) as failed:
        await review_decide(
            dev_server.client, Settings.from_env({"DATABASE_URL": database_url}), handle.id,
            decision="approve", reviewer="an.tran", role="care_lead", reason="nobody home",
            tenant=None, draft_version=shown["draft_version"], request_id=shown["request_id"],
            token="secret-token-value", patience=timedelta(seconds=1))
    assert failed.value.code == Exit.UNREACHABLE
    message = failed.value.message
    assert "no worker took the decision within 1 s" in message
    assert "\n" not in message and "secret-token-value" not in message
