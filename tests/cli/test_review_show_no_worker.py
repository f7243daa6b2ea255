"""`tollgate review show` while no worker runs: a query nobody answers was printed as
`Temporal refused: …` (exit 1, the SDK's cancelled call taken for a refusal). A waiting review
now ends with the documented exit 3 line; a finished one is shown from PostgreSQL, after a
short look for its ticket."""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from contracts import ReviewDecision
from tests.cli.helpers import consenting, live_settings, said_by
from tests.conftest import signed_event, start, wait_review
from tollgate.cli.review import review
from tollgate.dev.standins import StandIns
from tollgate.ops import review_ticket
from tollgate.runtime.workers import draft_worker, main_worker


async def test_review_show_with_no_worker_says_so_or_reads_postgresql(
        dev_server: WorkflowEnvironment, database_url: str, standins: StandIns,
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(review_ticket, "QUERY_TIMEOUT", timedelta(seconds=1))
    s, customer = live_settings(dev_server, database_url, standins, tmp_path)
    queue = s.task_queue
    async with main_worker(dev_server.client, s), draft_worker(dev_server.client, s):
        waiting = await start(dev_server.client, queue, signed_event(customer))
        rejected = await start(dev_server.client, queue, signed_event(consenting(standins)))
        await wait_review(waiting)
        ticket = await wait_review(rejected)
        await rejected.execute_update("review", ReviewDecision(
            request_id=ticket["request_id"], decision="reject", reviewer="an.tran",
            role="care_lead", reason="not now", draft_version=ticket["draft_version"]))
        await rejected.result()
    capsys.readouterr()
    code, text = await said_by(capsys, s, review, "show", waiting.id)
    assert code == 3, text
    assert text.strip() == (f"tollgate: {waiting.id}: no worker answered its query within 1 s: "
                            "is `tollgate dev` (or `python worker.py`) running?")
    # A finished run is asked for its ticket only briefly (FINISHED_QUERY_TIMEOUT): its record
    # is PostgreSQL's, and a reader is not held a waiting run's query timeout.
    monkeypatch.setattr(review_ticket, "QUERY_TIMEOUT", timedelta(seconds=60))
    began = time.monotonic()
    code, text = await said_by(capsys, s, review, "show", rejected.id)
    assert time.monotonic() - began < 30, "held as long as a waiting run's query"
    assert code == 0, text
    assert "state REJECTED" in text and "reject       v1" in text
