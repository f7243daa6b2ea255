"""Stalls show (issue 25): an outbox row the relay has not sent for longer than
``TOLLGATE_OUTBOX_STALL_SECONDS`` fails ``/healthz`` and ``/readyz``; ``/metrics`` and
``ops status`` carry the depth, the oldest age and the rows moved aside."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import asyncpg
import httpx
import pytest
from prometheus_client.core import Metric

from adapters.postgres.metrics import MetricsStore
from adapters.postgres.status import StatusStore
from tollgate.cli.ops_status import needs_a_human
from tollgate.http.deps import Services
from tollgate.observability.metric_families import families

LIMITS = {"max_past_sla": 0, "max_unknown": 0, "max_dead_letters": 0, "max_open_age_s": 3600}


async def add_row(pool: asyncpg.Pool, tenant: str, age: timedelta, *,
                  parked: bool = False) -> None:
    await pool.execute(
        "INSERT INTO outbox (workflow_id, tenant_id, raw, received_at, parked_at, parked_reason)"
        " VALUES ($1, $2, '{}', now() - $3::interval, CASE WHEN $4 THEN now() END,"
        " CASE WHEN $4 THEN 'delivery_failed' END)",
        f"event/{tenant}/{age.total_seconds()}-{parked}", tenant, age, parked)


@pytest.fixture
async def empty(http_services: Services) -> asyncpg.Pool:
    await http_services.pool.execute("DELETE FROM outbox")
    return http_services.pool


async def test_a_fresh_backlog_is_healthy(api: httpx.AsyncClient, empty: asyncpg.Pool) -> None:
    await add_row(empty, "acme", timedelta(seconds=5))
    for path in ("/healthz", "/readyz"):
        answer = await api.get(path)
        assert answer.status_code == 200, answer.text
        assert answer.json()["ok"] is True and answer.json()["outbox_backlog"] == 1


async def test_a_row_older_than_the_threshold_fails_health_and_readiness(
        api: httpx.AsyncClient, empty: asyncpg.Pool, http_services: Services) -> None:
    limit = http_services.settings.http.outbox_stall_s
    await add_row(empty, "acme", timedelta(seconds=limit + 60))
    await add_row(empty, "globex", timedelta(seconds=1))
    for path in ("/healthz", "/readyz"):
        answer = await api.get(path)
        assert answer.status_code == 503
        body = answer.json()
        assert body["ok"] is False and body["outbox_backlog"] == 2
        assert body["outbox_oldest_age_s"] > limit


async def test_rows_moved_aside_do_not_fail_health_but_are_counted(
        api: httpx.AsyncClient, empty: asyncpg.Pool) -> None:
    await add_row(empty, "acme", timedelta(hours=5), parked=True)
    answer = await api.get("/healthz")
    assert answer.status_code == 200
    assert answer.json()["outbox_moved_aside"] == 1 and answer.json()["outbox_backlog"] == 0


def _samples(metrics: list[Metric], name: str) -> dict[str, float]:
    family = next(m for m in metrics if m.name == name)
    return {s.labels["tenant_id"]: s.value for s in family.samples}


async def test_metrics_carry_depth_oldest_age_and_moved_aside(empty: asyncpg.Pool) -> None:
    await add_row(empty, "acme", timedelta(minutes=10))
    await add_row(empty, "acme", timedelta(minutes=1))
    await add_row(empty, "globex", timedelta(minutes=2), parked=True)
    served = list(families(await MetricsStore(empty).gauges(datetime.now(UTC))))
    assert _samples(served, "tollgate_outbox_depth") == {"acme": 2, "globex": 0}
    assert _samples(served, "tollgate_outbox_moved_aside") == {"acme": 0, "globex": 1}
    oldest = _samples(served, "tollgate_outbox_oldest_age_seconds")
    assert set(oldest) == {"acme"} and 590 < oldest["acme"] < 700


async def test_ops_status_names_a_stuck_outbox_and_rows_moved_aside(
        empty: asyncpg.Pool) -> None:
    store = StatusStore(empty)
    assert needs_a_human(await store.snapshot(datetime.now(UTC)), **LIMITS) == []
    await add_row(empty, "acme", timedelta(minutes=30))
    await add_row(empty, "globex", timedelta(minutes=1), parked=True)
    snap = await store.snapshot(datetime.now(UTC))
    assert snap["outbox"]["depth"] == 1 and snap["outbox"]["moved_aside"] == 1
    why = needs_a_human(snap, **LIMITS, max_outbox_age_s=300)
    assert any(w.startswith("outbox stuck: oldest unsent row is 30m old") for w in why)
    assert "1 outbox row(s) moved aside (tollgate ops outbox list)" in why
