"""A dead letter's replay run records its own end (ADR 0069).

Each run here is started as ``tollgate ops dlq replay`` starts it (approved, claimed, id
``reconcile/KEY/replay-1``, ``replay_of`` set) and nobody records its end for it: the command
that would have waited is gone (Ctrl-C, a closed terminal). The run's own end is the one
``dlq_replay_result`` audit row, named for who claimed the replay, and a second write of it
(a retried activity, the command hearing the end after all) writes nothing.

``TOLLGATE_RECORD_HISTORIES=PREFIX-`` writes the runs' histories under tests/replay/histories.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from temporalio.client import Client, WorkflowFailureError, WorkflowHandle
from temporalio.exceptions import CancelledError
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from activities.interceptor import ActivityContextInterceptor
from activities.reconcile import ReconcileActivities
from activities.resend_guard import ResendGuard
from adapters.ports.targets import TargetWrite
from adapters.postgres.ops import OpsStore
from adapters.postgres.pool import create_pool
from adapters.postgres.receipts import ReceiptStore
from contracts import ActionRequest, ReconcileRequest, target_task_queue
from contracts.drafting import CustomerRecord
from tests.workflows.unknown_write_support import unknown_write
from tollgate.ops.actions import replay_dead_letter
from workflows.reconcile_write import ReconcileWriteWorkflow

HISTORIES = Path(__file__).parent.parent / "replay" / "histories"


class Consenting:
    """What the resend guard reads for a replay (no token: the dead letter's approval is its
    authority, ADR 0049): only the customer's consent, given."""

    async def fetch_customer(self, tenant_id: str, customer_id: str) -> CustomerRecord:
        return CustomerRecord(tenant_id=tenant_id, customer_id=customer_id, first_name="Lan",
                              consent_messaging=True, updated_at=datetime.now(UTC))


class Target:
    """A target that never holds the write. ``lookup``: it can be looked up (so the lookup
    window runs); ``dedupes``: a resend with the same key is safe."""

    def __init__(self, name: str, *, dedupes: bool = False, lookup: bool = False) -> None:
        self.name = name
        self.dedupes_by_key = dedupes
        self.supports_lookup = lookup
        self.calls = self.lookups = 0

    async def execute(self, request: ActionRequest) -> TargetWrite:
        self.calls += 1
        return TargetWrite(idempotency_key=request.action_key, external_id=f"ext-{self.calls}")

    async def lookup(self, idempotency_key: str) -> TargetWrite | None:
        self.lookups += 1
        return None


@pytest.fixture
async def pool(database_url: str) -> AsyncIterator[asyncpg.Pool]:
    p = await create_pool(database_url, max_size=4)
    yield p
    await p.close()


async def claimed_replay(pool: asyncpg.Pool, target: Target,
                         claim: bool = True) -> tuple[int, ReconcileRequest]:
    """An unknown write's ``unreconciled_write`` dead letter, approved and (``claim``) its
    replay 1 claimed by op.kim, as ``tollgate ops dlq replay`` leaves it just before it starts
    the run."""
    receipts, ops = ReceiptStore(pool), OpsStore(pool)
    ref, action = await unknown_write(receipts, target.name)
    request = ReconcileRequest(ref=ref, action=action, lookup_window=timedelta(minutes=10))
    await ops.dead_letter(workflow_id=ref.workflow_id, error_class="unknown_write",
                          error_code="unreconciled_write", state="STOPPED", owner="oncall",
                          replay_plan="replay", redacted_payload=None, tenant_id="acme",
                          event_id=ref.event_id, correlation_id="corr",
                          action_key=action.action_key,
                          replay_input=request.model_dump(mode="json"))
    dl_id = int(await pool.fetchval("SELECT id FROM dead_letters WHERE action_key = $1",
                                    action.action_key))
    assert await ops.approve_dead_letter(dl_id, actor="op.kim", reason="target back")
    if claim:
        assert await ops.claim_replay(dl_id, actor="op.kim", replays=0) == 1
    return dl_id, request.model_copy(update={"replay_of": dl_id})


@contextlib.asynccontextmanager
async def workers(env: WorkflowEnvironment, pool: asyncpg.Pool,
                  target: Target) -> AsyncIterator[str]:
    """Workers of the current code for the reconciler and ``target``: their task queue."""
    activities = ReconcileActivities(ReceiptStore(pool), OpsStore(pool), {target.name: target},
                                     guard=ResendGuard(Consenting(), Consenting(), b"k" * 32))
    queue = f"rc-{uuid.uuid4().hex[:8]}"
    async with Worker(env.client, task_queue=queue, workflows=[ReconcileWriteWorkflow],
                      activities=[activities.dead_letter_write, activities.record_replay_end],
                      interceptors=[ActivityContextInterceptor()]), \
            Worker(env.client, task_queue=target_task_queue(queue, target.name),
                   activities=[activities.lookup_write, activities.resend_write],
                   interceptors=[ActivityContextInterceptor()]):
        yield queue


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


async def ends(pool: asyncpg.Pool, dl_id: int) -> list[tuple[str, dict[str, Any]]]:
    rows = await pool.fetch("SELECT actor, detail FROM audit WHERE action = 'dlq_replay_result'"
                            " AND target = $1 ORDER BY id", f"dead_letter/{dl_id}")
    return [(r["actor"], json.loads(r["detail"])) for r in rows]


def record(name: str, history: Any) -> None:
    prefix = os.environ.get("TOLLGATE_RECORD_HISTORIES")
    if prefix:
        data = json.loads(history.to_json())
        (HISTORIES / f"{prefix}{name}.json").write_text(json.dumps(data, indent=1) + "\n")


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
