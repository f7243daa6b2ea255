"""A dead letter's replay run records its own end (ADR 0069).

Each run here is started as ``tollgate ops dlq replay`` starts it (approved, claimed, id
``reconcile/KEY/replay-1``, ``replay_of`` set) and nobody records its end for it: the command
that would have waited is gone (Ctrl-C, a closed terminal). The run's own end is the one
``dlq_replay_result`` audit row, named for who claimed the replay, and a second write of it
(a retried activity, the command hearing the end after all) writes nothing.

``TOLLGATE_RECORD_HISTORIES=PREFIX-`` writes the runs' histories under tests/replay/histories
(``replay_run_support.record``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import asyncpg
import pytest
from temporalio.client import Client, WorkflowFailureError, WorkflowHandle
from temporalio.exceptions import CancelledError
from temporalio.testing import WorkflowEnvironment

from adapters.postgres.ops import OpsStore
from adapters.postgres.pool import create_pool
from contracts import ReconcileRequest
from tests.workflows.replay_run_support import Target, claimed_replay, ends, record, workers
from tollgate.ops.actions import replay_dead_letter
from workflows.reconcile_write import ReconcileWriteWorkflow


@pytest.fixture
async def pool(database_url: str) -> AsyncIterator[asyncpg.Pool]:
    p = await create_pool(database_url, max_size=4)
    yield p
    await p.close()


async def start_replay(env: WorkflowEnvironment, pool: asyncpg.Pool, target: Target,
                       request: ReconcileRequest,
                       then: Any) -> Any:
    """Run replay 1 of ``request``; ``then(handle)`` is what the test does with it (nobody
    records its end)."""
    async with workers(env, pool, target) as queue:
        handle = await env.client.start_workflow(
            ReconcileWriteWorkflow.run, request, task_queue=queue,
            id=f"reconcile/{request.action.action_key}/replay-1")
        return await then(handle)


async def first_lookup(target: Target) -> None:
    async with asyncio.timeout(30):
        while target.lookups == 0:
            await asyncio.sleep(0.05)


@pytest.mark.parametrize(("dedupes", "status"), [(False, "stopped"), (True, "resent")])
async def test_a_replay_nobody_waits_for_records_its_end(
    env: WorkflowEnvironment, pool: asyncpg.Pool, dedupes: bool, status: str
) -> None:
    target = Target(f"replay_end_{status}", dedupes=dedupes)
    dl_id, request = await claimed_replay(pool, target)

    async def finish(handle: WorkflowHandle[Any, Any]) -> Any:
        result = await handle.result()  # the test waits for the run; nothing else records
        record(f"reconcile_replay_{status}", await handle.fetch_history())
        return result

    result = await start_replay(env, pool, target, request, finish)

    assert result.status == status and target.calls == (1 if dedupes else 0)
    assert await ends(pool, dl_id) == [("op.kim", {"replay": 1, "result": status})]
    # A second write of the same end (the activity retried, or the command heard it after
    # all) writes nothing, whoever it names and whatever it says.
    ops = OpsStore(pool)
    assert not await ops.record_replay_result(dl_id, actor=None, replay=1, result=status)
    assert not await ops.record_replay_result(dl_id, actor="op.lee", replay=1, result="failed")
    assert await ends(pool, dl_id) == [("op.kim", {"replay": 1, "result": status})]
    if status == "stopped":  # its dead letter reopened, as before (ADR 0059, amended)
        assert await pool.fetchval("SELECT status FROM dead_letters WHERE id = $1",
                                   dl_id) == "OPEN"


async def test_a_replay_cancelled_in_its_window_records_that_it_ended(
    env: WorkflowEnvironment, pool: asyncpg.Pool
) -> None:
    target = Target("replay_end_cancelled", lookup=True)
    dl_id, request = await claimed_replay(pool, target)

    async def cancel(handle: WorkflowHandle[Any, Any]) -> None:
        await first_lookup(target)
        await handle.cancel()
        with pytest.raises(WorkflowFailureError) as failed:
            await handle.result()
        assert isinstance(failed.value.cause, CancelledError)

    await start_replay(env, pool, target, request, cancel)

    assert await ends(pool, dl_id) == [("op.kim", {"replay": 1, "result": "cancelled"})]
    assert target.calls == 0


async def test_a_replay_command_cut_short_still_gets_its_end_recorded(
    env: WorkflowEnvironment, pool: asyncpg.Pool
) -> None:
    """The operator's Ctrl-C while ``tollgate ops dlq replay`` waits out the lookup window:
    the command stops waiting, the run goes on, and its end is recorded when it ends."""
    target = Target("replay_end_cut_short", lookup=True)
    dl_id, request = await claimed_replay(pool, target, claim=False)
    row = await OpsStore(pool).dead_letter_row(dl_id)
    assert row is not None

    async def connect() -> Client:
        return env.client

    async with workers(env, pool, target) as queue:
        command = asyncio.create_task(replay_dead_letter(pool, row, "op.kim", connect, queue))
        await first_lookup(target)  # the run is in its lookup window, the command waits
        command.cancel()
        with pytest.raises(asyncio.CancelledError):
            await command
        assert await ends(pool, dl_id) == []  # the command wrote nothing
        # With the command's wait cancelled, the test server's clock no longer skips on its own
        # (a result() alone long-polls out, "No completion event found"): move it on by hand.
        await env.sleep(request.lookup_window + timedelta(minutes=1))
        run = env.client.get_workflow_handle_for(
            ReconcileWriteWorkflow.run, f"reconcile/{request.action.action_key}/replay-1")
        assert (await run.result()).status == "stopped"

    assert await ends(pool, dl_id) == [("op.kim", {"replay": 1, "result": "stopped"})]
