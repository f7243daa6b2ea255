"""Rollout modes on the time-skipping server with real PostgreSQL and the stand-in targets:
shadow runs the whole path and sends nothing, leaving a would-send receipt; a canary sends N and
keeps the rest in shadow; fixture mode sends fixture events only. The mode is on the receipt and
on the reviewer's decision (docs/rollout.md). A send held back ends STOPPED from EXECUTING in
PostgreSQL as in the workflow, its transitions numbered without a gap."""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import pytest
from temporalio.client import Client

from adapters.postgres.rollout import RolloutStore
from contracts import EventState
from contracts.rollout import RolloutMode
from policies.keys import action_key
from tests.conftest import Handle, fresh_key, signed_event
from tests.faults.conftest import send_key
from tests.faults.kill_switch_support import approved, customer, new_key, sent
from tests.faults.rollout_support import (
    TRANSITIONS_SQL,
    stopped_after_executing,
)
from tollgate.dev.standins import StandIns


@pytest.fixture
async def rollout(database_url: str) -> AsyncIterator[tuple[RolloutStore, asyncpg.Pool]]:
    pool = await asyncpg.create_pool(database_url, min_size=1, max_size=2)
    yield RolloutStore(pool), pool
    await pool.execute("DELETE FROM rollout_modes")
    await pool.close()


async def receipt_row(pool: asyncpg.Pool, key: str) -> asyncpg.Record:
    row = await pool.fetchrow("SELECT * FROM receipts WHERE action_key = $1", key)
    assert row is not None, "no receipt for the action"
    return row


async def ended_stopped_from_executing(pool: asyncpg.Pool, handle: Handle, code: str) -> None:
    """The event ends as the workflow says (query, search attribute, PostgreSQL row, outcome),
    and its transitions are numbered 1..n, each from the state the one before entered:
    APPROVED -> EXECUTING (the WOULD_SEND receipt's step) -> STOPPED (docs/rollout.md)."""
    rows = await pool.fetch(TRANSITIONS_SQL, handle.id)
    stopped_after_executing(rows)
    event = await pool.fetchrow("SELECT state, reason_code, last_seq, outcome->>'state' AS ended"
                                " FROM events WHERE workflow_id = $1", handle.id)
    assert tuple(event) == ("STOPPED", code, len(rows), "STOPPED")
    assert await handle.query("state") == EventState.STOPPED
    shown = (await handle.describe()).search_attributes.get("TollgateState")
    assert shown == ["STOPPED"]


async def test_shadow_runs_the_whole_path_and_leaves_a_would_send_receipt(
    worker_client: tuple[Client, str], standins: StandIns,
    rollout: tuple[RolloutStore, asyncpg.Pool],
) -> None:
    store, pool = rollout
    await store.set_mode(tenant_id="acme", adapter="messaging", mode=RolloutMode.SHADOW,
                         actor="op.kim", reason="first week")
    client, queue = worker_client
    key = new_key()
    handle = await approved(client, queue, signed_event(customer(standins), key=key))
    outcome = await handle.result()
    assert outcome.state == EventState.STOPPED
    assert outcome.reason_code == "shadow_would_send"
    assert sent(standins, send_key(key)) == (0, 0)  # not one POST reached the target
    row = await receipt_row(pool, send_key(key))
    assert (row["status"], row["rollout_mode"]) == ("WOULD_SEND", "shadow")
    assert row["request_fingerprint"] and row["attempts"] == 0
    decision = await pool.fetchval(
        "SELECT rollout_mode FROM review_decisions WHERE workflow_id = $1 AND accepted",
        handle.id)
    assert decision == "shadow"
    await ended_stopped_from_executing(pool, handle, "shadow_would_send")


async def test_canary_sends_n_then_keeps_the_rest_in_shadow_until_confirmed(
    worker_client: tuple[Client, str], standins: StandIns,
    rollout: tuple[RolloutStore, asyncpg.Pool],
) -> None:
    store, pool = rollout
    await store.set_mode(tenant_id="acme", adapter="*", mode=RolloutMode.CANARY,
                         actor="op.kim", reason="canary of one", canary=1)
    client, queue = worker_client
    first_key, second_key, third_key = new_key(), new_key(), new_key()
    first = await approved(client, queue, signed_event(customer(standins), key=first_key))
    assert (await first.result()).state == EventState.SUCCEEDED
    second = await approved(client, queue, signed_event(customer(standins), key=second_key))
    second_outcome = await second.result()
    assert (second_outcome.state, second_outcome.reason_code) == (
        EventState.STOPPED, "canary_closed_unconfirmed")
    assert sent(standins, send_key(first_key)) == (1, 1)
    assert sent(standins, send_key(second_key)) == (0, 0)
    assert (await receipt_row(pool, send_key(first_key)))["rollout_mode"] == "canary"
    assert (await receipt_row(pool, send_key(second_key)))["status"] == "WOULD_SEND"
    await ended_stopped_from_executing(pool, second, "canary_closed_unconfirmed")
    # The owner confirms: the tenant moves on to assisted and the next event sends.
    await store.set_mode(tenant_id="acme", adapter="*", mode=RolloutMode.ASSISTED,
                         actor="owner.lee", reason="canary looked right")
    third = await approved(client, queue, signed_event(customer(standins), key=third_key))
    assert (await third.result()).state == EventState.SUCCEEDED
    assert sent(standins, send_key(third_key)) == (1, 1)
    assert (await receipt_row(pool, send_key(third_key)))["rollout_mode"] == "assisted"


async def test_fixture_mode_sends_fixture_events_only(
    worker_client: tuple[Client, str], standins: StandIns,
    rollout: tuple[RolloutStore, asyncpg.Pool],
) -> None:
    store, _ = rollout
    await store.set_mode(tenant_id="acme", adapter="messaging", mode=RolloutMode.FIXTURE,
                         actor="op.kim", reason="fixtures only")
    client, queue = worker_client
    fixture_id, real_key = fresh_key("fixture"), new_key()
    fixture = await approved(client, queue, signed_event(customer(standins), event_id=fixture_id))
    real = await approved(client, queue, signed_event(customer(standins), key=real_key))
    assert (await fixture.result()).state == EventState.SUCCEEDED
    real_outcome = await real.result()
    assert (real_outcome.state, real_outcome.reason_code) == (
        EventState.STOPPED, "fixture_mode_not_fixture")
    fixture_send = action_key("acme", fixture_id, "messaging", "send_message")
    assert sent(standins, fixture_send) == (1, 1)
    assert sent(standins, send_key(real_key)) == (0, 0)
