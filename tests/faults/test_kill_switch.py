"""Kill switches on the time-skipping server: a closed switch holds the send (nothing sent,
nothing failed), other tenants go on, reopening lets it through; a canary reopening lets N
actions through and closes again."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import asyncpg
import pytest
from temporalio.client import Client

from adapters.postgres_ops import OpsStore
from adapters.standins import StandIns
from contracts import EventState, ReviewDecision
from tests.conftest import Handle, signed_event, start, wait_review


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
    customer_id = f"C-{uuid.uuid4().hex[:8]}"
    standins.crm.upsert(tenant, customer_id, first_name="Lan", consent_messaging=True)
    return customer_id


async def approved(client: Client, queue: str, raw: str) -> Handle:
    handle = await start(client, queue, raw)
    ticket = await wait_review(handle)
    await handle.execute_update("review", ReviewDecision(
        request_id=ticket["request_id"], decision="approve", reviewer="an.tran",
        role="care_lead", reason="ok", draft_version=ticket["draft_version"]))
    return handle


async def sent_for(standins: StandIns, entity: str) -> int:
    return sum(1 for m in standins.messaging.messages() if m["recipient_ref"] == entity)


async def test_closed_switch_holds_one_tenant_until_reopened(
    worker_client: tuple[Client, str], standins: StandIns, ops: OpsStore
) -> None:
    client, queue = worker_client
    await ops.set_switch(adapter="messaging", tenant_id="acme", closed=True,
                         reason="incident 42", actor="op.kim")
    held_customer, other_customer = customer(standins), customer(standins, "globex")
    held = await approved(client, queue, signed_event(held_customer))
    other = await approved(client, queue, signed_event(other_customer, tenant="globex"))
    assert (await other.result()).state == EventState.SUCCEEDED  # other tenants unaffected
    await asyncio.sleep(0.5)
    assert await held.query("state") == EventState.EXECUTING
    assert await sent_for(standins, held_customer) == 0
    await ops.set_switch(adapter="messaging", tenant_id="acme", closed=False,
                         reason="fixed", actor="op.kim")
    outcome = await held.result()  # the 30 s re-check passes in simulated time
    assert outcome.state == EventState.SUCCEEDED
    assert await sent_for(standins, held_customer) == 1


async def test_canary_reopening_lets_n_through_then_closes_until_confirmed(
    worker_client: tuple[Client, str], standins: StandIns, ops: OpsStore
) -> None:
    client, queue = worker_client
    await ops.set_switch(adapter="*", tenant_id="*", closed=False, reason="canary after fix",
                         actor="op.kim", canary=1)
    first_customer, second_customer = customer(standins), customer(standins)
    first = await approved(client, queue, signed_event(first_customer))
    assert (await first.result()).state == EventState.SUCCEEDED
    second = await approved(client, queue, signed_event(second_customer))
    await asyncio.sleep(0.5)
    assert await second.query("state") == EventState.EXECUTING
    assert await sent_for(standins, second_customer) == 0
    switches = {(s["adapter"], s["tenant_id"]): s for s in await ops.switches()}
    assert switches[("*", "*")]["closed"] is True
    await ops.set_switch(adapter="*", tenant_id="*", closed=False, reason="confirmed",
                         actor="op.kim")
    assert (await second.result()).state == EventState.SUCCEEDED
    assert await sent_for(standins, first_customer) == 1
    assert await sent_for(standins, second_customer) == 1
