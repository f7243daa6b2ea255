"""For the soak tests: a customer, the operator's store, and the histories of a run's chain."""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from adapters.postgres.ops import OpsStore
from tests.conftest import fresh_key
from tollgate.dev.standins import StandIns


@pytest.fixture
async def ops(database_url: str) -> AsyncIterator[OpsStore]:
    pool = await asyncpg.create_pool(database_url, min_size=1, max_size=2)
    store = OpsStore(pool)
    yield store
    await store.set_switch(adapter="messaging", tenant_id="acme", closed=False,
                           reason="test end", actor="test")
    await pool.close()


def customer(standins: StandIns, tenant: str = "acme") -> str:
    customer_id = fresh_key("C")
    standins.crm.upsert(tenant, customer_id, first_name="Lan", consent_messaging=True)
    return customer_id


async def run_histories(client: Client, workflow_id: str) -> list[tuple[int, int]]:
    """(events, bytes) of every run of ``workflow_id``, first to current, following each
    continue-as-new to the run it started."""
    sizes = []
    run_id: str | None = (await client.get_workflow_handle(workflow_id).describe()).run_id
    first = client.get_workflow_handle(workflow_id, run_id=run_id)
    chain_start = (await first.describe()).raw_description.workflow_execution_info
    run_id = chain_start.first_run_id or run_id
    while run_id:
        history = await client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()
        sizes.append((len(history.events), sum(e.ByteSize() for e in history.events)))
        last = history.events[-1]
        run_id = (last.workflow_execution_continued_as_new_event_attributes.new_execution_run_id
                  if last.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW
                  else None)
    return sizes
