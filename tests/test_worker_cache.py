"""The main worker's sticky-cache size: a documented default, a variable to change it."""

import uuid
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from tests.conftest import worker_settings
from tollgate.config.worker import MAX_CACHED_WORKFLOWS, WorkerSettings
from tollgate.dev.standins import StandIns
from tollgate.runtime.workers import main_worker

MAX_CACHED_ENV = WorkerSettings.variable("max_cached_workflows")
#: What the SDK caches when a worker does not say (temporalio.worker.Worker's default).
SDK_DEFAULT = 1000


def max_cached_workflows(env: dict[str, str]) -> int:
    return WorkerSettings.from_env(env).max_cached_workflows


@pytest.mark.parametrize(("variable", "cached"), [(None, MAX_CACHED_WORKFLOWS), ("250", 250)])
async def test_the_main_worker_caches_fewer_runs_than_the_sdk_default(
    env: WorkflowEnvironment, database_url: str, standins: StandIns, tmp_path: Path,
    variable: str | None, cached: int,
) -> None:
    # 1,000 cached runs waiting for review took the worker past 200 MB (docs/performance.md).
    extra = {MAX_CACHED_ENV: variable} if variable else {}
    settings = worker_settings(database_url, standins, tmp_path, f"tq-{uuid.uuid4().hex[:8]}",
                               **extra)
    async with main_worker(env.client, settings) as worker:
        assert worker.config()["max_cached_workflows"] == cached < SDK_DEFAULT


def test_variable_sets_it_and_nonsense_stops_the_worker() -> None:
    assert max_cached_workflows({MAX_CACHED_ENV: "250"}) == 250
    for bad in ("0", "-5", "lots"):
        with pytest.raises(SystemExit, match=MAX_CACHED_ENV):
            max_cached_workflows({MAX_CACHED_ENV: bad})
