"""Readiness says why a worker is not ready, and never the database URL (issue 13, item 1)."""

from __future__ import annotations

import pytest
from aiohttp.test_utils import TestClient, TestServer

from tests.ports import free_port
from tollgate.config.settings import Settings
from tollgate.runtime.health import (
    drain_from,
    health_app,
    postgres_answers,
    workers_polling,
)


async def ask(checks: list, path: str) -> tuple[int, str]:  # type: ignore[type-arg]
    async with TestClient(TestServer(health_app(checks))) as client:
        answer = await client.get(path)
        return answer.status, await answer.text()


async def test_not_ready_before_any_worker_polls() -> None:
    status, text = await ask([workers_polling([])], "/readyz")
    assert status == 503 and "no worker" in text
    assert (await ask([workers_polling([])], "/livez"))[0] == 200


async def test_not_ready_when_postgres_does_not_answer() -> None:
    dsn = f"postgresql://tollgate:hunter2@127.0.0.1:{free_port()}/tollgate"
    status, text = await ask([postgres_answers(dsn)], "/readyz")
    assert status == 503 and text.strip() == "PostgreSQL does not answer"
    assert "hunter2" not in text


async def test_ready_when_postgres_answers(database_url: str) -> None:
    assert await ask([postgres_answers(database_url)], "/readyz") == (200, "ready\n")


@pytest.mark.parametrize("name, value, check", [
    ("TOLLGATE_DRAIN_SECONDS", "soon", lambda s: drain_from(s)),
    ("TOLLGATE_HEALTH_PORT", "80a", lambda s: s.worker.health_port),
])
def test_bad_settings_are_one_line(name: str, value: str, check) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit, match=name):
        check(Settings.from_env({name: value}))
