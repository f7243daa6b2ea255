"""The main worker's workflow-task polls: scaled by the server by default (a burst of new events
is not queued behind the SDK's one poll for new runs), a fixed maximum when configured."""

import uuid
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import PollerBehaviorAutoscaling, PollerBehaviorSimpleMaximum

from tests.conftest import worker_settings
from tollgate.config.worker import WorkerSettings
from tollgate.dev.standins import StandIns
from tollgate.runtime.workers import main_worker

POLLERS_ENV = WorkerSettings.variable("workflow_task_pollers")


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


def test_nonsense_stops_the_worker_naming_the_variable() -> None:
    assert WorkerSettings.from_env({POLLERS_ENV: " 3 "}).workflow_task_pollers == 3
    for bad in ("0", "-5", "lots"):
        with pytest.raises(SystemExit, match=POLLERS_ENV):
            WorkerSettings.from_env({POLLERS_ENV: bad})
