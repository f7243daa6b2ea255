"""The on-call's reading of events refused at intake: `tollgate trace` finds a dead-lettered
`schema_drift` event and prints a quarantined one's envelope as it is; `ops dlq show` prints no
`None`; `ops dlq approve` refuses what `ops dlq replay` refuses, and the plan says what to do."""

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
from tests.conftest import fresh_key, signed_event, start, worker_settings
from tollgate.cli.common import run_in_loop
from tollgate.cli.trace import trace
from tollgate.config.settings import Settings
from tollgate.dev.standins import StandIns


async def finish(client: Client, queue: str, raw: str, state: EventState) -> str:
    handle = await start(client, queue, raw)
    outcome = await handle.result()
    assert isinstance(outcome, FinalOutcome) and outcome.state == state
    return handle.id


@pytest.fixture
async def refused(
    worker_client: tuple[Client, str], env: WorkflowEnvironment, database_url: str,
    standins: StandIns, tmp_path: Path,
) -> AsyncIterator[tuple[str, str, str, Settings]]:
    """A CARE_DUE v2 event (retired: dead-lettered) and one with a bad signature
    (quarantined), each run to its end by the worker. Yields the drift event's id too."""
    client, queue = worker_client
    event_id = fresh_key("drift")
    drift = await finish(client, queue, signed_event(version=2, event_id=event_id),
                         EventState.DEAD_LETTERED)
    bad = json.loads(signed_event())
    bad["signature"] = "0" * 64
    quarantined = await finish(client, queue, json.dumps(bad), EventState.QUARANTINED)
    yield drift, event_id, quarantined, worker_settings(
        database_url, standins, tmp_path, queue,
        TEMPORAL_ADDRESS=env.client.service_client.config.target_host)


async def run_trace(s: Settings, *argv: str) -> int:
    return await run_in_loop(trace.main(list(argv), standalone_mode=False), s)


async def test_trace_reads_a_schema_drift_dead_letter(
    refused: tuple[str, str, str, Settings], capsys: pytest.CaptureFixture[str],
) -> None:
    drift, event_id, _, s = refused
    for name in (drift, event_id):  # by workflow id and by event id alike
        assert await run_trace(s, name) == 0
        lines = capsys.readouterr().out.splitlines()
        assert lines[0] == f"{drift}  DEAD_LETTERED (schema_drift)"
        assert lines[1].startswith(f"  envelope  {event_id} · CARE_DUE v2 · occurred 20")
        assert "  intake    DEAD_LETTERED (schema_drift)" in lines
        assert any(line.startswith("  dead      #") and "dead_letter/schema_drift" in line
                   for line in lines)
    assert await run_trace(s, drift, "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["envelope"]["tenant_id"] == "acme" and data["envelope"]["trace_id"]


async def test_a_quarantined_envelope_prints_what_is_known(
    refused: tuple[str, str, str, Settings], capsys: pytest.CaptureFixture[str],
) -> None:
    _, _, quarantined, s = refused
    assert await run_trace(s, quarantined) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"{quarantined}  QUARANTINED (bad_signature)"
    assert lines[1].startswith("  envelope  evt-") and " · CARE_DUE v3 · " in lines[1]
    assert "None" not in "\n".join(lines)


async def test_dlq_show_prints_no_none_and_approve_refuses_a_drift(
    refused: tuple[str, str, str, Settings], capsys: pytest.CaptureFixture[str],
) -> None:
    drift, _, _, s = refused
    conn = await asyncpg.connect(s.dsn)
    try:
        dl_id = await conn.fetchval("SELECT id FROM dead_letters WHERE workflow_id = $1", drift)
    finally:
        await conn.close()
    assert await run_ops(["dlq", "show", str(dl_id)], s) == 0
    shown = capsys.readouterr().out
    assert "None" not in shown
    assert "\napproved_by      -\n" in shown and "\nreplayed_workflow_id -\n" in shown
    plan = next(line for line in shown.splitlines() if line.startswith("replay_plan"))
    assert "new idempotency_key" in plan and "then `tollgate ops dlq replay`" not in plan

    assert await run_ops(["dlq", "approve", str(dl_id), "--reason", "try"], s,
                         role="change_owner", name="lan") == 1
    err = capsys.readouterr().err
    assert f"dead letter {dl_id} is not replayed from here" in err
    assert await run_ops(["dlq", "show", str(dl_id), "--json"], s) == 0
    row = json.loads(capsys.readouterr().out)
    assert (row["status"], row["approvals"]) == ("OPEN", 0)
