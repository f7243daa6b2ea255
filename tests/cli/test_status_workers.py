"""`tollgate ops status` says whether a worker polls the task queue: runs with no worker stop
moving, and PostgreSQL alone shows them where they stopped, as if all were well."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from pathlib import Path

import asyncpg
import pytest
from temporalio.testing import WorkflowEnvironment

from tests.cli.helpers import live_settings, said_by
from tests.cli.ops_status_support import add_event
from tests.conftest import signed_event, start, wait_review, worker_settings
from tests.pg_databases import fresh_database
from tollgate.cli.ops import ops
from tollgate.dev.standins import StandIns
from tollgate.runtime.workers import draft_worker, main_worker

pytestmark = pytest.mark.e2e

NO_WORKER = "no worker polls task queue"


async def test_status_names_a_task_queue_no_worker_polls_while_events_wait(
        dev_server: WorkflowEnvironment, database_url: str, standins: StandIns,
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    s, customer = live_settings(dev_server, database_url, standins, tmp_path)
    async with main_worker(dev_server.client, s), draft_worker(dev_server.client, s):
        await wait_review(await start(dev_server.client, s.task_queue, signed_event(customer)))
        capsys.readouterr()
        code, text = await said_by(capsys, s, ops, "status", "--json")
        running = json.loads(text[text.index("{"):])
    # A task queue no worker polls (Temporal lists a stopped worker's polls for minutes after,
    # so a queue never polled stands for one whose workers are gone); the review still waits.
    bare = worker_settings(database_url, standins, tmp_path, f"tq-{uuid.uuid4().hex[:8]}",
                           TEMPORAL_ADDRESS=s.temporal_address)
    code, text = await said_by(capsys, bare, ops, "status")
    stopped_code, stopped_json = await said_by(capsys, bare, ops, "status", "--json")
    stopped = json.loads(stopped_json[stopped_json.index("{"):])

    assert running["workers"]["state"] == "ok"
    assert not any(NO_WORKER in why for why in running["needs_a_human"])
    assert stopped["workers"] == {"task_queue": bare.task_queue, "namespace": "default",
                                  "state": "no worker", "detail": None}
    assert any(NO_WORKER in why for why in stopped["needs_a_human"])
    assert code == stopped_code == 6
    assert f"workers: no worker (task queue {bare.task_queue})" in text


async def test_status_needs_a_human_when_temporal_is_unreachable_while_events_are_open(
        pg_server: str, standins: StandIns, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Runs do not move with Temporal away, as with no worker; the screen said `workers:
    unreachable` and exited 0 (a codec server unreachable exits 6)."""
    url = await fresh_database(pg_server)
    nowhere = "127.0.0.1:1"  # nothing listens there
    s = worker_settings(url, standins, tmp_path, "tq-status", TEMPORAL_ADDRESS=nowhere)
    conn = await asyncpg.connect(url)
    try:
        await add_event(conn, "acme", "SUCCEEDED", timedelta(hours=5))
        capsys.readouterr()
        # Nothing open: nothing waits for Temporal, so nothing needs a human.
        code, text = await said_by(capsys, s, ops, "status")
        assert code == 0, text
        assert f"workers: unreachable (task queue tq-status) · Temporal at {nowhere}" in text
        await add_event(conn, "acme", "AWAITING_REVIEW", timedelta(minutes=5),
                        timedelta(hours=3))
    finally:
        await conn.close()
    code, text = await said_by(capsys, s, ops, "status")
    json_code, report = await said_by(capsys, s, ops, "status", "--json")
    why = json.loads(report[report.index("{"):])["needs_a_human"]
    assert code == json_code == 6, text
    # The screen still answers from PostgreSQL, and its last line says why.
    assert "AWAITING_REVIEW" in text
    assert text.strip().splitlines()[-1] == (
        f"needs a human: Temporal at {nowhere} unreachable: open events do not move (start "
        "it, or set TEMPORAL_ADDRESS)")
    assert why == [f"Temporal at {nowhere} unreachable: open events do not move (start it, "
                   "or set TEMPORAL_ADDRESS)"]
