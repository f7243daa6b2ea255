"""`tollgate trace EVENT` and `tollgate ops audit --verify` on a finished event: the whole chain
in text and JSON, no message text or customer data in it, and a tampered row named."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from contracts import EventState, FinalOutcome
from tests.cli.helpers import run_ops
from tests.cli.trace_support import run_trace
from tests.conftest import signed_event, start, worker_settings
from tests.workflows.review_helpers import approve, new_customer
from tollgate.config.settings import Settings
from tollgate.dev.standins import StandIns


@pytest.fixture
async def finished(
    worker_client: tuple[Client, str], env: WorkflowEnvironment, database_url: str,
    standins: StandIns, tmp_path: Path,
) -> AsyncIterator[tuple[str, Settings]]:
    """One CARE_DUE event approved by an.tran and sent: SUCCEEDED with a receipt."""
    client, queue = worker_client
    # A fresh customer each time: the policy's daily limit per customer would stop a second.
    customer = new_customer(standins)
    handle = await start(client, queue, signed_event(customer))
    await approve(handle, reason="looks right")
    outcome = await handle.result()
    assert isinstance(outcome, FinalOutcome) and outcome.state == EventState.SUCCEEDED
    settings = worker_settings(
        database_url, standins, tmp_path, queue,
        TEMPORAL_ADDRESS=env.client.service_client.config.target_host,
        TOLLGATE_UI_URL="http://ui.test:8233")
    yield handle.id, settings


async def test_trace_prints_the_whole_chain_of_a_finished_event(
    finished: tuple[str, Settings], capsys: pytest.CaptureFixture[str],
) -> None:
    wf, s = finished
    assert await run_trace(s, wf) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"{wf}  SUCCEEDED")
    assert "intake    VALIDATED" in text
    assert "context   " in text and "from crm" in text
    assert "draft v1  drafted · offline/" in text
    assert "-> AWAITING_REVIEW" in text
    assert "by an.tran (care_lead) on v1: accepted" in text
    assert "receipt   messaging/send_message" in text and " SUCCEEDED external msg_" in text
    assert f"http://ui.test:8233/namespaces/default/workflows/{wf.replace('/', '%2F')}/" in text
    # Names and sources only: not the customer's name, the pet, or the reviewer's reason.
    for private in ("Lan", "Miu", "looks right"):
        assert private not in text

    assert await run_trace(s, wf, "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["state"] == "SUCCEEDED"
    assert data["envelope"]["trace_id"] and data["envelope"]["payload_fingerprint"]
    assert [d["reviewer"] for d in data["decisions"]] == ["an.tran"]
    assert [r["status"] for r in data["receipts"]] == ["SUCCEEDED"]
    assert data["runs"][0]["workflow_id"] == wf and data["runs"][0]["status"] == "COMPLETED"
    assert all(f["source"] in ("crm", "event") for f in data["context_fields"])
    assert "Miu" not in json.dumps(data)


async def test_verify_names_the_edited_row_and_fails(
    finished: tuple[str, Settings], capsys: pytest.CaptureFixture[str],
) -> None:
    wf, s = finished
    assert await run_trace(s, wf, "--verify") == 0
    assert "audit     chain intact" in capsys.readouterr().out
    conn = await asyncpg.connect(s.dsn)
    try:
        await conn.execute("UPDATE review_decisions SET reviewer = 'someone.else'"
                           " WHERE workflow_id = $1", wf)
        key = await conn.fetchval("SELECT decision_key FROM review_decisions"
                                  " WHERE workflow_id = $1", wf)
    finally:
        await conn.close()
    assert await run_trace(s, wf, "--verify") == 1
    out = capsys.readouterr().out
    assert f"! review_decisions {key}: row was edited after it was chained" in out
    assert await run_ops(["audit", "--verify", "--tenant", "acme"], s) == 1
    out = capsys.readouterr().out
    assert f"! {wf} review_decisions {key}: row was edited after it was chained" in out


async def test_an_unknown_event_is_one_line_not_found(
    finished: tuple[str, Settings], capsys: pytest.CaptureFixture[str],
) -> None:
    _, s = finished
    assert await run_trace(s, "event/acme/no-such-key") == 4
    assert capsys.readouterr().err.strip() == "tollgate: event/acme/no-such-key: no such event"


async def test_review_show_of_a_finished_event_ends_with_its_chain(
    finished: tuple[str, Settings], worker_client: tuple[Client, str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    from tollgate.cli.review_show import review_show

    wf, s = finished
    assert await review_show(worker_client[0], s, wf) == 0
    text = capsys.readouterr().out
    assert "\ntrace\n" in text
    assert "receipt   messaging/send_message" in text and "run       " + wf in text
    assert await review_show(worker_client[0], s, wf, as_json=True) == 0
    data = json.loads(capsys.readouterr().out)
    assert [r["status"] for r in data["trace"]["receipts"]] == ["SUCCEEDED"]
