"""The circuit's one statement in real PostgreSQL: it counts each signal once, closes the switch
at the limit with an audit row, and counts afresh after an operator reopens."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest

from adapters.postgres.circuit import CircuitStore
from adapters.postgres.ops import OpsStore
from adapters.postgres.pool import create_pool


@pytest.fixture
async def circuit(database_url: str) -> AsyncIterator[CircuitStore]:
    pool = await create_pool(database_url, max_size=2)
    yield CircuitStore(pool)
    await pool.close()


async def signal(c: CircuitStore, tenant: str, key: str, kind: str = "duplicate") -> bool:
    counted = await c.signal(adapter="messaging", tenant_id=tenant, kind=kind, key=key, limit=3,
                             window=timedelta(minutes=10), policy_version="2026-12-01.1")
    return counted.tripped


async def closed(c: CircuitStore, tenant: str) -> bool:
    return bool(await c.pool.fetchval(
        "SELECT closed FROM kill_switches WHERE adapter = 'messaging' AND tenant_id = $1",
        tenant))


async def test_the_third_distinct_duplicate_closes_the_switch_with_its_figures(
    circuit: CircuitStore,
) -> None:
    tenant = f"t{uuid.uuid4().hex[:6]}"
    # A retried activity reporting the same key again counts once.
    assert [await signal(circuit, tenant, k) for k in ("k1", "k1", "k2")] == [False] * 3
    assert not await closed(circuit, tenant)
    assert await signal(circuit, tenant, "k3")
    assert await closed(circuit, tenant)
    # Another tenant and another kind are counted apart.
    assert not await signal(circuit, f"{tenant}x", "k4")
    assert not await signal(circuit, tenant, "k5", kind="unknown_write")
    row = await circuit.pool.fetchrow(
        "SELECT detail FROM audit WHERE actor = 'circuit' AND target = $1", f"messaging/{tenant}")
    detail = json.loads(row["detail"])
    assert (detail["rule"], detail["count"], detail["limit"], detail["last_signal"]) == (
        "duplicates", 3, 3, "k3")


async def test_a_reopening_starts_the_count_again(circuit: CircuitStore) -> None:
    tenant = f"t{uuid.uuid4().hex[:6]}"
    for k in ("a", "b", "c"):
        await signal(circuit, tenant, k)
    await OpsStore(circuit.pool).set_switch(adapter="messaging", tenant_id=tenant, closed=False,
                                            reason="fixed", actor="op.kim", canary=2)
    assert not await signal(circuit, tenant, "d")
    assert not await closed(circuit, tenant)
    await signal(circuit, tenant, "e")
    assert await signal(circuit, tenant, "f")
    assert await closed(circuit, tenant)
