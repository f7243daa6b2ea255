"""`tollgate review show` and `review list` against a run waiting for review: what a reviewer
reads before deciding, and the queue with each record's age and SLA left."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from tests.conftest import signed_event, start, wait_review, worker_settings
from tests.eventually import eventually
from tests.workflows.review_helpers import _decisions_sent_as_an_edge, decide, new_customer
from tollgate.cli.review_list import review_list
from tollgate.cli.review_show import review_show
from tollgate.config.settings import Settings
from tollgate.dev.standins import StandIns
from tollgate.runtime.exits import Exit, Failure
from tollgate.runtime.workers import draft_worker, main_worker

__all__ = ["_decisions_sent_as_an_edge"]  # the autouse fixture: refusals audited as an edge's


async def test_review_show_prints_draft_policy_and_decisions(
    worker_client: tuple[Client, str], standins: StandIns, database_url: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    client, queue = worker_client
    customer = new_customer(standins)
    handle = await start(client, queue, signed_event(customer))
    ticket = await wait_review(handle)
    await decide(handle, ticket, role="intern")
    capsys.readouterr()
    settings = Settings.from_env({"DATABASE_URL": database_url})
    assert await review_show(client, settings, handle.id,
                             now=datetime.now(UTC) - timedelta(hours=1)) == 0
    out = capsys.readouterr().out
    assert "state AWAITING_REVIEW" in out and "policy 2026-12-02.3" in out and "risk low" in out
    assert f"draft v{ticket['draft_version']} (offline" in out
    assert "crm.first_name = " in out and "CRM customer record" in out and "unknowns: -" in out
    assert "refused: role_not_allowed" in out
    assert "postgresql://" not in out  # no connection string, no secret
    assert (await decide(handle, ticket, "reject")).accepted
    await handle.result()


async def test_review_list_shows_waiting_records_with_age_and_sla_left(
    dev_server: WorkflowEnvironment, standins: StandIns, database_url: str, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    client, queue = dev_server.client, f"tq-{uuid.uuid4().hex[:8]}"
    settings = worker_settings(database_url, standins, tmp_path, queue)
    async with main_worker(client, settings), draft_worker(client, settings):
        handle = await start(client, queue, signed_event(new_customer(standins)))
        ticket = await wait_review(handle)
        capsys.readouterr()
        # The clock is the test's: two minutes after the run started, whatever the machine did.
        now = (await handle.describe()).start_time + timedelta(minutes=2)

        async def listed() -> str:
            assert await review_list(client, tenant="acme", now=now) == 0
            return capsys.readouterr().out

        # Visibility follows the upsert shortly after.
        out = await eventually(listed, f"{handle.id} in the review list",
                               until=lambda o: handle.id in o, timeout=15, interval=0.1)
        line = next(x for x in out.splitlines() if x.startswith(handle.id))
        assert "acme" in line and "0h 02m" in line
        assert re.search(r"\b3h [0-5]\dm left\b", line), line  # the 4 h SLA, less the wait
        assert await review_list(client, tenant="globex") == 0
        assert handle.id not in capsys.readouterr().out
        with pytest.raises(Failure) as refused:
            await review_list(client, tenant="acme' OR 'x' = 'x")
        assert refused.value.code == Exit.USAGE
        assert (await decide(handle, ticket, "reject")).accepted
        await handle.result()
