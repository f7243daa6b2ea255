"""What one approved, sent event leaves in PostgreSQL's audit chain (issue 33): its first send
counts its attempt in the statement that opens the receipt, so the receipt is chained twice
(opened with the attempt, settled), not three times; the receipt ends as it always did and the
chain still verifies. A run of the settle-closes shape (ADR 0057) records its end in the
settle's transaction: the same entries from one commit fewer."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import asyncpg
import pytest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from contracts import EventState, FinalOutcome
from contracts.events import QUIET_SHAPE, STARTED_SHAPE
from tests.cli.helpers import run_ops
from tests.conftest import signed_event, start, worker_settings
from tests.workflows.review_helpers import approve, new_customer
from tollgate.dev.standins import StandIns


@pytest.mark.parametrize(("shape", "commits"), [(STARTED_SHAPE, 6), (QUIET_SHAPE, 7)],
                         ids=["settle-closes", "quiet"])
async def test_one_approved_send_chains_its_receipt_twice_and_verifies(
    worker_client: tuple[Client, str], env: WorkflowEnvironment, database_url: str,
    standins: StandIns, tmp_path: Path, capsys: pytest.CaptureFixture[str], shape: Literal[2, 3],
    commits: int,
) -> None:
    client, queue = worker_client
    customer = new_customer(standins)
    handle = await start(client, queue, signed_event(customer), shape=shape)
    await approve(handle, reason="fine")
    outcome = await handle.result()
    assert isinstance(outcome, FinalOutcome) and outcome.state == EventState.SUCCEEDED

    conn = await asyncpg.connect(database_url)
    try:
        receipt = await conn.fetchrow(
            "SELECT status, attempts, fence, external_id FROM receipts WHERE workflow_id = $1",
            handle.id)
        by_source = {r["source"]: r["n"] for r in await conn.fetch(
            "SELECT source, count(*) AS n FROM audit_chain WHERE workflow_id = $1"
            " GROUP BY source", handle.id)}
        # Each audited statement commits on its own: its entries share one transaction id.
        audited_commits = await conn.fetchval(
            "SELECT count(DISTINCT xmin::text) FROM audit_chain WHERE workflow_id = $1",
            handle.id)
        receipt_ops = [r["op"] for r in await conn.fetch(
            "SELECT op FROM audit_chain WHERE workflow_id = $1 AND source = 'receipts'"
            " ORDER BY n", handle.id)]
    finally:
        await conn.close()
    assert receipt is not None
    assert (receipt["status"], receipt["attempts"], receipt["fence"]) == ("SUCCEEDED", 1, 1)
    assert receipt["external_id"]
    # Opened with its attempt counted, then settled: no separate attempt update in between.
    assert receipt_ops == ["INSERT", "UPDATE"], by_source
    # The event's other audited writes are what they were: 11 entries from 7 audited
    # statements, 12 from 8 before (docs/performance.md counts them); the settle-closes shape
    # writes the final transition in the settle's transaction: 6.
    assert by_source == {"state_transitions": 8, "review_decisions": 1, "receipts": 2}
    assert audited_commits == commits

    settings = worker_settings(
        database_url, standins, tmp_path, queue,
        TEMPORAL_ADDRESS=env.client.service_client.config.target_host)
    capsys.readouterr()
    assert await run_ops(["audit", "--verify", "--tenant", "acme"], settings) == 0
    assert "chain(s) checked: intact" in capsys.readouterr().out
