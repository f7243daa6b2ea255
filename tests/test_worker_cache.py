"""The main worker's sticky-cache size: a documented default, a variable to change it."""

import pytest

from tollgate.config.worker import MAX_CACHED_WORKFLOWS, WorkerSettings

MAX_CACHED_ENV = WorkerSettings.variable("max_cached_workflows")


def max_cached_workflows(env: dict[str, str]) -> int:
    return WorkerSettings.from_env(env).max_cached_workflows


def test_default_is_below_the_sdk_default() -> None:
    # 1,000 cached runs waiting for review took the worker past 200 MB (docs/performance.md).
    assert max_cached_workflows({}) == MAX_CACHED_WORKFLOWS < 1000


def test_variable_sets_it_and_nonsense_stops_the_worker() -> None:
    assert max_cached_workflows({MAX_CACHED_ENV: "250"}) == 250
    for bad in ("0", "-5", "lots"):
        with pytest.raises(SystemExit, match=MAX_CACHED_ENV):
            max_cached_workflows({MAX_CACHED_ENV: bad})
