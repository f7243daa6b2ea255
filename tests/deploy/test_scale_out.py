"""`tollgate dev --workers 3` (issue 13, item 5): three main worker processes share one task
queue; a batch of orders is fanned out while one of them is SIGKILLed, and every order is
still delivered to each consumer once (one reservation per order, none doubled)."""

from __future__ import annotations

import json
import os
import re
import signal
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime

import asyncpg
import pytest

from adapters.broker.cancel import within
from contracts.fanout import BusinessEvent, FanOutResult
from policies.keys import fan_out_id
from tests.conftest import fresh_key
from tests.stack.devproc import DevProcess, stack_folder
from tollgate.intake.publish import publish_event
from tollgate.runtime.client import build_client

pytestmark = pytest.mark.e2e
BATCH = 24


@pytest.fixture
def three_workers() -> Iterator[DevProcess]:
    with stack_folder() as state_dir:
        stack = DevProcess(state_dir).start("--workers", "3")
        try:
            yield stack
        finally:
            if stack.proc is not None and stack.proc.poll() is None:
                stack.proc.send_signal(signal.SIGTERM)
                stack.wait_exit(60)


def order() -> BusinessEvent:
    return BusinessEvent(
        event_id=fresh_key("e"), event_type="ORDER_PLACED", schema_version=1,
        tenant_id="acme", occurred_at=datetime.now(UTC),
        payload={"order_id": f"O-{uuid.uuid4().hex[:8]}", "customer_id": "C-1",
                 "lines": [{"sku": "SKU-1", "quantity": 2}], "total_cents": 1990})


async def test_a_batch_survives_one_of_three_workers_killed(three_workers: DevProcess) -> None:
    pids = re.search(r"3 main workers: this process and pids ([\d, ]+)", three_workers.output())
    assert pids, three_workers.output()
    extra = [int(p) for p in pids.group(1).split(",")]
    assert len(extra) == 2
    endpoints = json.loads((three_workers.state_dir / "endpoints.json").read_text())
    client = await build_client(endpoints["temporal_address"], env={
        "TOLLGATE_KEYS_FILE": str(three_workers.state_dir / "keys.json")})
    events = [order() for _ in range(BATCH)]
    for i, event in enumerate(events):
        assert await publish_event(client, "tollgate", event) == "accepted"
        if i == BATCH // 2:
            # Mid-batch: what it held times out and moves to the other two.
            os.kill(extra[0], signal.SIGKILL)
    results = [await within(client.get_workflow_handle(
        fan_out_id(e.event_id), result_type=FanOutResult).result(), 90) for e in events]
    # The plain consumers delivered; notify handed each order to the control core (its child
    # ProcessEvent is the control core's to finish: tests/workflows/test_fan_out_confirmation.py).
    assert all({r.consumer: r.status for r in result.results} == {
        "inventory": "delivered", "notify": "handed_over", "analytics": "delivered"}
        for result in results)
    conn = await asyncpg.connect(endpoints["database_url"])
    try:
        orders = [e.payload["order_id"] for e in events]
        rows = await conn.fetch("SELECT order_id, quantity FROM inventory_reservations"
                                " WHERE order_id = ANY($1::text[])", orders)
        deliveries = await conn.fetchval(
            "SELECT count(*) FROM consumer_deliveries WHERE event_id = ANY($1::text[])",
            [e.event_id for e in events])
    finally:
        await conn.close()
    assert sorted(r["order_id"] for r in rows) == sorted(orders)
    assert {r["quantity"] for r in rows} == {2}
    assert deliveries == BATCH * 2
