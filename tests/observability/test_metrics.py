"""The worker's /metrics: figures read from PostgreSQL at scrape time (so they survive a worker
restart), labelled by tenant, adapter, state and reason, never by anything personal."""

from __future__ import annotations

from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families
from temporalio.testing import WorkflowEnvironment

from contracts import EventState, ReviewDecision
from tests.conftest import signed_event, start, wait_review, worker_settings
from tests.ports import free_port
from tollgate.dev.standins import StandIns
from tollgate.runtime.workers import draft_worker, main_worker


def samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


async def test_a_sent_event_and_a_quarantine_show_on_the_scrape(
    env: WorkflowEnvironment, standins: StandIns, database_url: str, tmp_path: Path
) -> None:
    env_client = env.client
    queue, port = f"tq-metrics-{free_port()}", free_port()
    settings = worker_settings(database_url, standins, tmp_path, queue,
                               TOLLGATE_METRICS_PORT=str(port))
    async with main_worker(env_client, settings), draft_worker(env_client, settings):
        handle = await start(env_client, queue, signed_event("C-1001"))
        ticket = await wait_review(handle)
        await handle.execute_update("review", ReviewDecision(
            request_id=ticket["request_id"], decision="approve", reviewer="an.tran",
            role="care_lead", reason="fine", draft_version=ticket["draft_version"]))
        assert (await handle.result()).state == EventState.SUCCEEDED
        bad = await start(env_client, queue, '{"not": "an event"}')
        assert (await bad.result()).state == EventState.QUARANTINED

        async with httpx.AsyncClient() as http:
            scrape = await http.get(f"http://127.0.0.1:{port}/metrics")
    assert scrape.status_code == 200
    got = samples(scrape.text)
    assert got[("tollgate_events", frozenset({("tenant_id", "acme"),
                                              ("state", "SUCCEEDED")}))] >= 1
    assert got[("tollgate_receipts", frozenset({("tenant_id", "acme"), ("adapter", "messaging"),
                                                ("status", "SUCCEEDED")}))] >= 1
    assert any(name == "tollgate_quarantined" and value >= 1 for (name, _), value in got.items())
    # Labels are ids and codes: the customer's name and pet never appear on the page.
    assert "Lan" not in scrape.text and "Miu" not in scrape.text
