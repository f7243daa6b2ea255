"""A step that keeps failing shows in `tollgate ops status` (issue 25): through a real worker
whose interceptor has the PostgreSQL step watch, a store step made to fail try after try is
counted and named (exit 6), and vanishes once it succeeds, or once it fails for good (its run
then decides). A first try that succeeds writes nothing."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from temporalio import activity, workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from activities.interceptor import ActivityContextInterceptor
from activities.step_watch import SHOW_AFTER_ATTEMPTS
from adapters.postgres.metrics import MetricsStore
from adapters.postgres.status import StatusStore
from adapters.postgres.watch import PostgresStepWatch
from contracts import EventRef, StepRecord
from contracts.errors import RejectedError, RetryableError
from tests.cli.helpers import base_env, tollgate
from tests.conftest import fresh_key
from tests.eventually import eventually
from tollgate.observability.metric_families import families
from tollgate.runtime.exits import Exit

#: What the step does on its next try: "fail" (retryable), "reject" (final) or "ok".
MODE: dict[str, str] = {}
TRIES: dict[str, int] = {}


@activity.defn(name="record_step")
async def record_step(step: StepRecord) -> None:
    wf = step.ref.workflow_id
    TRIES[wf] = TRIES.get(wf, 0) + 1
    if MODE[wf] == "fail":
        raise RetryableError("db_unavailable", "the store did not answer")
    if MODE[wf] == "reject":
        raise RejectedError("row_refused", "the store refused the row for good")


@workflow.defn(sandboxed=False)
class Recording:
    @workflow.run
    async def run(self, step: StepRecord) -> str:
        try:
            await workflow.execute_local_activity(
                record_step, step, start_to_close_timeout=timedelta(seconds=5),
                retry_policy=RetryPolicy(initial_interval=timedelta(milliseconds=50),
                                         maximum_interval=timedelta(milliseconds=300),
                                         non_retryable_error_types=["rejected"]))
        except (ActivityError, ApplicationError):
            # A local activity's failure reaches this test server's workflows unwrapped.
            return "failed for good"
        return "recorded"


def step_of(workflow_id: str) -> StepRecord:
    ref = EventRef(workflow_id=workflow_id, tenant_id="acme", event_id=workflow_id[-8:],
                   event_type="CARE_DUE", entity_id="C-1", correlation_id="c", schema_version=3)
    return StepRecord(ref=ref, policy_version="v", transitions=[])


@pytest.fixture
async def worker(env: WorkflowEnvironment, database_url: str,
                 pool: asyncpg.Pool) -> AsyncIterator[str]:
    queue = f"watch-{uuid.uuid4().hex[:8]}"
    watch = PostgresStepWatch(database_url)
    async with Worker(env.client, task_queue=queue, workflows=[Recording],
                      activities=[record_step],
                      interceptors=[ActivityContextInterceptor(watch)],
                      workflow_runner=UnsandboxedWorkflowRunner()):
        yield queue
    await watch.close()


async def failing(pool: asyncpg.Pool) -> dict[str, Any]:
    snap = await StatusStore(pool).snapshot(datetime.now(UTC))
    return dict(snap["failing_steps"])


async def scraped(pool: asyncpg.Pool, name: str) -> dict[str, float]:
    """One family of /metrics as the collector builds it: {label values: value}."""
    gauges = await MetricsStore(pool).gauges(datetime.now(UTC))
    return {",".join(s.labels.values()): s.value for f in families(gauges) if f.name == name
            for s in f.samples}


def ops_status(database_url: str, tmp_path: Path) -> tuple[int, dict[str, Any]]:
    said = tollgate("ops", "status", "--json",
                    env=base_env(tmp_path, DATABASE_URL=database_url))
    assert said.clean(), said.text
    return said.code, json.loads(said.out)


async def test_a_step_failing_try_after_try_shows_then_vanishes_once_it_succeeds(
    env: WorkflowEnvironment, worker: str, pool: asyncpg.Pool, database_url: str,
    tmp_path: Path,
) -> None:
    wf = f"event/acme/{fresh_key('watch')}"
    MODE[wf] = "fail"
    handle = await env.client.start_workflow(Recording.run, step_of(wf), id=wf,
                                             task_queue=worker)
    shown = await eventually(lambda: failing(pool), "the failing step in ops status",
                             until=lambda f: f["count"] == 1)
    oldest = shown["oldest"]
    assert (oldest["workflow_id"], oldest["step"]) == (wf, "record_step")
    assert oldest["attempts"] >= SHOW_AFTER_ATTEMPTS
    assert (oldest["error_class"], oldest["error_code"]) == ("retryable", "db_unavailable")

    assert await scraped(pool, "tollgate_failing_steps") == {"record_step": 1.0}
    code, report = ops_status(database_url, tmp_path)
    assert code == Exit.ATTENTION
    assert any(r.startswith("1 step(s) failing again and again (limit 0); oldest record_step "
                            f"of {wf}") for r in report["needs_a_human"])

    MODE[wf] = "ok"
    assert await handle.result() == "recorded"
    assert TRIES[wf] > SHOW_AFTER_ATTEMPTS
    assert (await failing(pool))["count"] == 0
    assert await scraped(pool, "tollgate_failing_steps") == {}
    code, report = ops_status(database_url, tmp_path)
    assert code == Exit.OK, report["needs_a_human"]


async def test_a_step_that_fails_for_good_leaves_the_list_and_a_first_try_writes_nothing(
    env: WorkflowEnvironment, worker: str, pool: asyncpg.Pool,
) -> None:
    wf = f"event/acme/{fresh_key('watch')}"
    MODE[wf] = "fail"
    handle = await env.client.start_workflow(Recording.run, step_of(wf), id=wf,
                                             task_queue=worker)
    await eventually(lambda: failing(pool), "the failing step in ops status",
                     until=lambda f: f["count"] == 1)
    MODE[wf] = "reject"
    assert await handle.result() == "failed for good"
    assert (await failing(pool))["count"] == 0

    quiet = f"event/acme/{fresh_key('watch')}"
    MODE[quiet] = "ok"
    assert await env.client.execute_workflow(Recording.run, step_of(quiet), id=quiet,
                                             task_queue=worker) == "recorded"
    assert await pool.fetchval("SELECT count(*) FROM failing_steps") == 0
