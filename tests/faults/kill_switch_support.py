"""For the fault tests around a send: a customer, an approved event, a run held and waiting, what
was sent, and the operator's store."""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import pytest
from temporalio.client import Client

from adapters.postgres.ops import OpsStore
from contracts import ReviewDecision
from tests.conftest import Handle, fresh_key, start, wait_review
from tests.faults.conftest import activity_attempts, timers_started
from tollgate.dev.standins import StandIns


@pytest.fixture
async def ops(database_url: str) -> AsyncIterator[OpsStore]:
    pool = await asyncpg.create_pool(database_url, min_size=1, max_size=2)
    store = OpsStore(pool)
    yield store
    for adapter, tenant in (("messaging", "acme"), ("*", "*")):
        await store.set_switch(adapter=adapter, tenant_id=tenant, closed=False, reason="test end",
                               actor="test")
    await pool.close()


def customer(standins: StandIns, tenant: str = "acme") -> str:
    customer_id = fresh_key("C")
    standins.crm.upsert(tenant, customer_id, first_name="Lan", consent_messaging=True)
    return customer_id


async def approved(client: Client, queue: str, raw: str) -> Handle:
    handle = await start(client, queue, raw)
    ticket = await wait_review(handle)
    await handle.execute_update("review", ReviewDecision(
        request_id=ticket["request_id"], decision="approve", reviewer="an.tran",
        role="care_lead", reason="ok", draft_version=ticket["draft_version"]))
    return handle


def new_key() -> str:
    return fresh_key("ks")


async def held_and_waiting(client: Client, handle: Handle) -> bool:
    """The send step answered "held" and the workflow started its re-check timer."""
    results = [a.result for a in await activity_attempts(client, handle.id, "execute_action")]
    held = any(r is not None and r["status"] == "held" for r in results)
    return held and await timers_started(client, handle.id) >= 1


def sent(standins: StandIns, key: str) -> tuple[int, int]:
    """(POSTs received, messages held) for an action key."""
    messaging = standins.messaging
    return messaging.posts_for(key), sum(
        1 for m in messaging.messages() if m["idempotency_key"] == key)
