"""A repeat of an event whose run closed with no outcome (an operator terminated it): the
producer is told "duplicate" with how the first delivery ended, never the run's failure as an
error (the CLI's exit 9, the outbox relay's try counted against a good row, a Redis entry
dead-lettered after its tries), and no second run starts."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from temporalio.client import WorkflowExecutionStatus
from temporalio.testing import WorkflowEnvironment

from tests.conftest import fresh_key, signed_event, worker_settings
from tollgate.dev.standins import StandIns
from tollgate.http import relay
from tollgate.intake.submit import describe, submit
from tollgate.runtime.workers import draft_worker, main_worker

pytestmark = pytest.mark.e2e


async def test_a_repeat_of_a_terminated_run_is_a_duplicate_saying_how_it_ended(
        dev_server: WorkflowEnvironment, database_url: str, standins: StandIns,
        tmp_path: Path) -> None:
    queue = f"tq-{uuid.uuid4().hex[:8]}"
    key = fresh_key()
    raw = signed_event(key=key)
    client = dev_server.client
    async with main_worker(client, worker_settings(database_url, standins, tmp_path, queue)), \
            draft_worker(client, worker_settings(database_url, standins, tmp_path, queue)):
        first = await submit(client, raw, task_queue=queue)
        assert first.status == "accepted"
        handle = client.get_workflow_handle(first.workflow_id)
        first_run = (await handle.describe()).run_id
        await handle.terminate(reason="stopped by hand")
        again = await submit(client, raw, task_queue=queue)
        # The outbox relay sends it as well, and counts nothing against the row.
        relayed = await relay._send(client, raw, queue)
        # The same key with another payload is still the producer's conflict.
        other = await submit(client, signed_event("C-1002", key=key), task_queue=queue)
    assert again.status == relayed.status == "duplicate"
    assert again.reason_code == "ended_without_outcome"
    assert again.workflow_id == first.workflow_id
    assert "ended terminated, with no outcome" in describe(again)
    assert (other.status, other.reason_code) == ("invalid", "idempotency_conflict")
    latest = await handle.describe()  # no second run: the terminated one is still the latest
    assert (latest.run_id, latest.status) == (first_run, WorkflowExecutionStatus.TERMINATED)
