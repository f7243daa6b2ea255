"""ReconcileWriteWorkflow against targets that cannot be looked up.

A target that neither dedupes by key nor can be looked up must never be resent to: the write
goes to a dead letter for an operator, at once, since no wait can tell more. One that dedupes
but cannot be looked up gets its one resend with the same key, also without the lookup wait.

``TOLLGATE_RECORD_HISTORIES=PREFIX-`` writes each run's history under tests/replay/histories,
so the replay tests keep these command sequences.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg
import pytest
from temporalio.client import WorkflowHistory
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from activities.action_token import fingerprint_of
from activities.interceptor import ActivityContextInterceptor
from activities.reconcile import ReconcileActivities
from activities.resend_guard import ResendGuard
from adapters.ports.targets import TargetWrite
from adapters.postgres.ops import OpsStore
from adapters.postgres.pool import create_pool
from adapters.postgres.receipts import MOVED_ASIDE_SQL, ReceiptStore
from contracts import (
    ActionRequest,
    ReceiptStatus,
    ReconcileRequest,
    ReconcileResult,
    target_task_queue,
)
from contracts.drafting import CustomerRecord
from policies.action_token import mint
from tests.workflows.unknown_write_support import unknown_write
from workflows.reconcile_write import ReconcileWriteWorkflow

HISTORIES = Path(__file__).parent.parent / "replay" / "histories"
TOKEN_KEY = b"k" * 32
SEND_SEQ = 9


class Binding:
    """What the resend guard reads, as the send left it: the approved draft unchanged, the
    token's use held by the send (``SEND_SEQ``), a consenting customer. The guard's refusals
    against the real store are tests/faults/test_reconcile_token.py."""

    def __init__(self, workflow_id: str) -> None:
        self.use_id = f"{workflow_id}/{SEND_SEQ}"

    async def approved_draft(self, workflow_id: str, draft_version: int) -> tuple[bool, str]:
        return True, "hello"

    async def used_by(self, token_id: str, action_key: str, use_id: str) -> bool:
        return use_id == self.use_id

    async def fetch_customer(self, tenant_id: str, customer_id: str) -> CustomerRecord:
        return CustomerRecord(tenant_id=tenant_id, customer_id=customer_id, first_name="Lan",
                              consent_messaging=True, updated_at=datetime.now(UTC))


class NoLookupTarget:
    """A target with no lookup; ``dedupes`` says whether a resend with the same key is safe."""

    supports_lookup = False

    def __init__(self, name: str, *, dedupes: bool) -> None:
        self.name = name
        self.dedupes_by_key = dedupes
        self.calls = 0

    async def execute(self, request: ActionRequest) -> TargetWrite:
        self.calls += 1
        return TargetWrite(idempotency_key=request.action_key, external_id=f"ext-{self.calls}")

    async def lookup(self, idempotency_key: str) -> TargetWrite | None:
        raise AssertionError("a target without lookup is never asked")


@pytest.fixture
async def pool(database_url: str) -> AsyncIterator[asyncpg.Pool]:
    p = await create_pool(database_url, max_size=4)
    yield p
    await p.close()


async def reconcile_unknown_write(
    env: WorkflowEnvironment, pool: asyncpg.Pool, target: NoLookupTarget, record_as: str,
    *, with_token: bool = True,
) -> tuple[ReconcileResult, ActionRequest, WorkflowHistory]:
    """Leave one write UNKNOWN at ``target`` and run the reconciler on it, carrying the send's
    token (``with_token``) as the event's run hands it over."""
    receipts, ops = ReceiptStore(pool), OpsStore(pool)
    ref, action = await unknown_write(receipts, target.name)
    binding = Binding(ref.workflow_id)
    activities = ReconcileActivities(receipts, ops, {target.name: target},
                                     guard=ResendGuard(binding, binding, TOKEN_KEY))
    token = mint(token_id="t-1", action_key=action.action_key,
                 fingerprint=fingerprint_of(action, "hello"), key=TOKEN_KEY,
                 now=datetime.now(UTC), ttl=timedelta(minutes=15)) if with_token else None
    queue = f"rc-{uuid.uuid4().hex[:8]}"
    async with Worker(env.client, task_queue=queue, workflows=[ReconcileWriteWorkflow],
                      activities=[activities.dead_letter_write],
                      interceptors=[ActivityContextInterceptor()]), \
            Worker(env.client, task_queue=target_task_queue(queue, target.name),
                   activities=[activities.lookup_write, activities.resend_write],
                   interceptors=[ActivityContextInterceptor()]):
        handle = await env.client.start_workflow(
            ReconcileWriteWorkflow.run,
            ReconcileRequest(ref=ref, action=action, lookup_window=timedelta(minutes=10),
                             draft_version=1, send_seq=SEND_SEQ, action_token=token),
            id=f"reconcile/{action.action_key}", task_queue=queue)
        result = await handle.result()
        history = await handle.fetch_history()
    prefix = os.environ.get("TOLLGATE_RECORD_HISTORIES")
    if prefix:
        data = json.loads(history.to_json())
        (HISTORIES / f"{prefix}{record_as}.json").write_text(json.dumps(data, indent=1) + "\n")
    return result, action, history


async def moved_aside(pool: asyncpg.Pool, key: str) -> bool:
    """The receipt is its dead letter's: `ops status` counts it there, the sweep leaves it
    (ADR 0059)."""
    return bool(await pool.fetchval(
        f"SELECT {MOVED_ASIDE_SQL} FROM receipts r WHERE action_key = $1", key))


def timers(history: WorkflowHistory) -> int:
    return sum(1 for event in history.events if event.HasField("timer_started_event_attributes"))


async def test_a_blind_target_goes_straight_to_its_dead_letter(
    env: WorkflowEnvironment, pool: asyncpg.Pool
) -> None:
    target = NoLookupTarget("blind", dedupes=False)

    result, action, history = await reconcile_unknown_write(env, pool, target,
                                                            "reconcile_blind_dead_lettered")

    assert (result.status, result.reason_code) == ("stopped", "unreconciled_write")
    assert target.calls == 0  # never resent blind
    assert timers(history) == 0  # no lookup window waited out
    receipt = await ReceiptStore(pool).get(action.action_key)
    assert receipt is not None and receipt.status == ReceiptStatus.UNKNOWN
    letters = await pool.fetch("SELECT error_code, status FROM dead_letters WHERE action_key = $1",
                               action.action_key)
    assert [(r["error_code"], r["status"]) for r in letters] == [("unreconciled_write", "OPEN")]
    assert await moved_aside(pool, action.action_key)


async def test_a_deduping_target_without_lookup_is_resent_once_at_once(
    env: WorkflowEnvironment, pool: asyncpg.Pool
) -> None:
    target = NoLookupTarget("dedupe_only", dedupes=True)

    result, action, history = await reconcile_unknown_write(env, pool, target,
                                                            "reconcile_dedupe_only_resent")

    assert result.status == "resent" and target.calls == 1
    assert timers(history) == 0
    receipt = await ReceiptStore(pool).get(action.action_key)
    assert receipt is not None and receipt.status == ReceiptStatus.SUCCEEDED


async def test_a_resend_carrying_no_token_is_refused_and_dead_lettered(
    env: WorkflowEnvironment, pool: asyncpg.Pool
) -> None:
    """A reconciliation nothing binds to an approval (begun before ADR 0049, or made by hand)
    is never resent: the same one dead letter, with the refusal's code, and no call."""
    target = NoLookupTarget("dedupe_untokened", dedupes=True)

    result, action, _ = await reconcile_unknown_write(
        env, pool, target, "reconcile_resend_refused", with_token=False)

    assert (result.status, result.reason_code) == ("stopped", "action_token_missing")
    assert target.calls == 0
    letters = await pool.fetch("SELECT error_class, error_code FROM dead_letters"
                               " WHERE action_key = $1", action.action_key)
    assert [tuple(r.values()) for r in letters] == [("rejected", "action_token_missing")]
    assert await moved_aside(pool, action.action_key)
