"""A repeat of an event whose run closed is answered with the end PostgreSQL recorded after the
run (a dead letter's replay that settled the write, ADR 0061), never with PostgreSQL's trouble:
no database, an error or a lookup that does not answer leaves the run's answer, at once (ADR
0062). The replayed-and-settled event end to end through `tollgate submit` is in
tests/faults/test_dead_letters.py."""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path
from typing import Any, cast

import asyncpg
import pytest
from temporalio.testing import WorkflowEnvironment

from contracts import EventState, FinalOutcome
from tests.conftest import fresh_key, signed_event, worker_settings
from tollgate.dev.standins import StandIns
from tollgate.http import relay
from tollgate.intake.recorded import recorded_ends, recorded_ends_at
from tollgate.intake.submit import describe, submit
from tollgate.runtime.workers import draft_worker, main_worker


class _Pool:
    """Stands in for an asyncpg pool whose one query hangs or fails."""

    def __init__(self, hang: bool) -> None:
        self.hang = hang

    async def fetchval(self, *_: Any) -> str:
        if self.hang:
            await asyncio.sleep(3600)
        raise ConnectionResetError("the database went away")


def _pool(hang: bool) -> asyncpg.Pool:
    return cast(asyncpg.Pool, _Pool(hang))


async def test_a_lookup_in_trouble_answers_nothing_within_its_bound() -> None:
    for hang in (True, False):
        began = time.monotonic()
        assert await recorded_ends(_pool(hang), timeout_s=0.2)("event/acme/k") is None
        assert time.monotonic() - began < 2
    async with recorded_ends_at(None) as none:
        assert none is None
    # Nothing listens there: refused at once, the answer is no answer.
    async with recorded_ends_at("postgresql://u@127.0.0.1:1/db", timeout_s=1) as lookup:
        assert lookup is not None and await lookup("event/acme/k") is None


@pytest.mark.e2e
async def test_a_repeat_after_a_replay_settled_the_write_names_the_recorded_end(
        dev_server: WorkflowEnvironment, database_url: str, standins: StandIns,
        tmp_path: Path) -> None:
    queue = f"tq-{uuid.uuid4().hex[:8]}"
    key = fresh_key()
    raw = signed_event(key=key)
    client = dev_server.client
    s = worker_settings(database_url, standins, tmp_path, queue)
    async with main_worker(client, s), draft_worker(client, s):
        first = await submit(client, raw, task_queue=queue)
        wid = first.workflow_id
        # Ended by hand (`ops close --unresolved-write` terminates the run), and then the dead
        # letter's replay settled the write: PostgreSQL's row holds the end.
        await client.get_workflow_handle(wid).terminate(reason="stopped by hand")
        end = FinalOutcome(workflow_id=wid, tenant_id="acme", state=EventState.SUCCEEDED,
                           reason_code="dead_letter_replayed")
        stopped = end.model_copy(update={"state": EventState.STOPPED,
                                         "reason_code": "run_terminated_write_unknown"})

        async def replayed(workflow_id: str) -> FinalOutcome | None:
            return end if workflow_id == wid else None

        async def closed_by_hand(workflow_id: str) -> FinalOutcome | None:
            return stopped

        again = await submit(client, raw, task_queue=queue, recorded=replayed)
        relayed = await relay._send(client, raw, queue, replayed)
        # Only a replay's end is one the run cannot show: an ordinary recorded end, or no
        # answer from PostgreSQL, leaves the run's own answer.
        as_run = [await submit(client, raw, task_queue=queue, recorded=lookup)
                  for lookup in (closed_by_hand, recorded_ends(_pool(True), timeout_s=0.2),
                                 recorded_ends(_pool(False)), None)]
        # Another payload under the key is still the producer's conflict.
        other = await submit(client, signed_event("C-1002", key=key), task_queue=queue,
                             recorded=replayed)
    assert (again.status, again.state, again.reason_code) == (
        "duplicate", EventState.SUCCEEDED, "duplicate")
    assert again.previous == end and relayed == again
    assert describe(again) == (
        f"duplicate {wid} (earlier outcome: SUCCEEDED (dead_letter_replayed))")
    for ack in as_run:
        assert (ack.status, ack.reason_code) == ("duplicate", "ended_without_outcome"), ack
        assert "ended terminated, with no outcome" in describe(ack)
    assert (other.status, other.reason_code) == ("invalid", "idempotency_conflict")
