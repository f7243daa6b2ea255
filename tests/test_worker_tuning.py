"""How the main worker is tuned, each with a documented default and a variable to change it:
its sticky cache, smaller than the SDK's (parked reviews cost memory); its workflow-task polls,
scaled by the server (a burst of new events is not queued behind the SDK's one poll for new
runs); and the workflow tasks it holds at once, bounded for its memory (ADR 0087;
docs/performance.md)."""

import uuid
from pathlib import Path
from typing import Any

import pytest
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import PollerBehaviorAutoscaling, PollerBehaviorSimpleMaximum

from tests.conftest import worker_settings
from tollgate.config.worker import MAX_CACHED_WORKFLOWS, MAX_WORKFLOW_TASKS, WorkerSettings
from tollgate.dev.standins import StandIns
from tollgate.runtime.workers import main_worker

CACHE_ENV = WorkerSettings.variable("max_cached_workflows")
POLLERS_ENV = WorkerSettings.variable("workflow_task_pollers")
TASKS_ENV = WorkerSettings.variable("max_workflow_tasks")
#: What the SDK does when a worker does not say (temporalio.worker.Worker's defaults).
SDK_DEFAULTS: dict[str, Any] = {"max_cached_workflows": 1000,
                                "workflow_task_poller_behavior": PollerBehaviorSimpleMaximum(5),
                                "max_concurrent_workflow_tasks": 100}


@pytest.mark.parametrize(("variable", "value", "key", "expected"), [
    # 1,000 cached runs waiting for review took the worker past 200 MB.
    (CACHE_ENV, None, "max_cached_workflows", MAX_CACHED_WORKFLOWS),
    (CACHE_ENV, "250", "max_cached_workflows", 250),
    # Five polls with one for new runs held a burst's first tasks up to 1.5 s.
    (POLLERS_ENV, None, "workflow_task_poller_behavior", PollerBehaviorAutoscaling()),
    (POLLERS_ENV, "8", "workflow_task_poller_behavior", PollerBehaviorSimpleMaximum(8)),
    # Scaled polls filled the SDK's 100 while 2,000 events parked: 206-213 MB.
    (TASKS_ENV, None, "max_concurrent_workflow_tasks", MAX_WORKFLOW_TASKS),
    (TASKS_ENV, "12", "max_concurrent_workflow_tasks", 12),
])
async def test_the_main_worker_departs_from_the_sdk_default_as_documented(
    env: WorkflowEnvironment, database_url: str, standins: StandIns, tmp_path: Path,
    variable: str, value: str | None, key: str, expected: object,
) -> None:
    extra = {variable: value} if value else {}
    settings = worker_settings(database_url, standins, tmp_path, f"tq-{uuid.uuid4().hex[:8]}",
                               **extra)
    async with main_worker(env.client, settings) as worker:
        assert worker.config()[key] == expected != SDK_DEFAULTS[key]


@pytest.mark.parametrize(("variable", "good", "field", "bad"), [
    (CACHE_ENV, ("250", 250), "max_cached_workflows", ("0", "-5", "lots")),
    (POLLERS_ENV, (" 3 ", 3), "workflow_task_pollers", ("0", "-5", "lots")),
    (TASKS_ENV, ("40", 40), "max_workflow_tasks", ("1", "-5", "many")),
])
def test_a_variable_sets_it_and_nonsense_stops_the_worker_naming_it(
        variable: str, good: tuple[str, int], field: str, bad: tuple[str, ...]) -> None:
    assert getattr(WorkerSettings.from_env({variable: good[0]}), field) == good[1]
    for text in bad:
        with pytest.raises(SystemExit, match=variable):
            WorkerSettings.from_env({variable: text})
