"""A dead letter's replay run as ``tollgate ops dlq replay`` starts it, on the current code with
real PostgreSQL and a stand-in target: shared by the tests of how a replay run ends
(test_replay_records_its_end.py, test_replay_cancelled_mid_resend.py).

``TOLLGATE_RECORD_HISTORIES=PREFIX-`` makes ``record`` write a run's history under
tests/replay/histories."""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
from temporalio.client import WorkflowHistory
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from activities.interceptor import ActivityContextInterceptor
from activities.reconcile import ReconcileActivities
from activities.resend_guard import ResendGuard
from adapters.ports.targets import TargetWrite
from adapters.postgres.ops import OpsStore
from adapters.postgres.receipts import ReceiptStore
from contracts import ActionRequest, ReconcileRequest, target_task_queue
from contracts.drafting import CustomerRecord
from tests.workflows.unknown_write_support import unknown_write
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


async def ends(pool: asyncpg.Pool, dl_id: int) -> list[tuple[str, dict[str, Any]]]:
    """The replay ends recorded for dead letter ``dl_id``: (actor, detail), oldest first."""
    rows = await pool.fetch("SELECT actor, detail FROM audit WHERE action = 'dlq_replay_result'"
                            " AND target = $1 ORDER BY id", f"dead_letter/{dl_id}")
    return [(r["actor"], json.loads(r["detail"])) for r in rows]


def record(name: str, history: WorkflowHistory) -> None:
    prefix = os.environ.get("TOLLGATE_RECORD_HISTORIES")
    if prefix:
        data = json.loads(history.to_json())
        (HISTORIES / f"{prefix}{name}.json").write_text(json.dumps(data, indent=1) + "\n")
