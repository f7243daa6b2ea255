"""The main worker's workflow-task polls: scaled by the server by default (a burst of new events
is not queued behind the SDK's one poll for new runs), a fixed maximum when configured; and
the workflow tasks it holds at once, bounded for its memory (ADR 0087)."""

import uuid
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import PollerBehaviorAutoscaling, PollerBehaviorSimpleMaximum

from tests.conftest import worker_settings
from tollgate.config.worker import MAX_WORKFLOW_TASKS, WorkerSettings
from tollgate.dev.standins import StandIns
from tollgate.runtime.workers import main_worker

POLLERS_ENV = WorkerSettings.variable("workflow_task_pollers")
TASKS_ENV = WorkerSettings.variable("max_workflow_tasks")
#: What the SDK holds at once when a worker does not say.
SDK_DEFAULT_TASKS = 100


@pytest.mark.parametrize(("variable", "behaviour"), [
    (None, PollerBehaviorAutoscaling()), ("8", PollerBehaviorSimpleMaximum(8))])
async def test_the_main_worker_scales_its_workflow_polls_unless_told_a_maximum(
    env: WorkflowEnvironment, database_url: str, standins: StandIns, tmp_path: Path,
    variable: str | None, behaviour: object,
) -> None:
    # The SDK's default, five polls with one for new runs, held a burst's first tasks up to
    # 1.5 s (docs/performance.md, "Fourteenth session").
    extra = {POLLERS_ENV: variable} if variable else {}
    settings = worker_settings(database_url, standins, tmp_path, f"tq-{uuid.uuid4().hex[:8]}",
                               **extra)
    async with main_worker(env.client, settings) as worker:
        assert worker.config()["workflow_task_poller_behavior"] == behaviour


@pytest.mark.parametrize(("variable", "held"), [(None, MAX_WORKFLOW_TASKS), ("12", 12)])
async def test_the_main_worker_holds_fewer_workflow_tasks_than_the_sdk_default(
    env: WorkflowEnvironment, database_url: str, standins: StandIns, tmp_path: Path,
    variable: str | None, held: int,
) -> None:
    # Scaled polls filled the SDK's 100 while 2,000 events parked: 206-213 MB against the
    # goal's 200 (docs/performance.md, "Fourteenth session").
    extra = {TASKS_ENV: variable} if variable else {}
    settings = worker_settings(database_url, standins, tmp_path, f"tq-{uuid.uuid4().hex[:8]}",
                               **extra)
    async with main_worker(env.client, settings) as worker:
        assert worker.config()["max_concurrent_workflow_tasks"] == held < SDK_DEFAULT_TASKS


def test_nonsense_stops_the_worker_naming_the_variable() -> None:
    assert WorkerSettings.from_env({POLLERS_ENV: " 3 "}).workflow_task_pollers == 3
    for bad in ("0", "-5", "lots"):
        with pytest.raises(SystemExit, match=POLLERS_ENV):
            WorkerSettings.from_env({POLLERS_ENV: bad})
    assert WorkerSettings.from_env({TASKS_ENV: "40"}).max_workflow_tasks == 40
    for bad in ("1", "-5", "many"):
        with pytest.raises(SystemExit, match=TASKS_ENV):
            WorkerSettings.from_env({TASKS_ENV: bad})
