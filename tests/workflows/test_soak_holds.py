"""Soak: runs held for days on the time-skipping server stay inside their history budget and go
on at once when woken (docs/runbook.md, "How long a run may wait").

A kill switch closed for 7 days, then reopened and the wake-up sent, in both target modes
(deduping and not: one message either way); a gate hold of 7 days, cleared and woken. Each run's
history (every run of the chain, continue-as-new included) is under the budget; the figures are
in the assertion message and printed."""

from __future__ import annotations

from datetime import timedelta

import asyncpg
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from adapters.postgres.ops import OpsStore
from contracts import EventState
from contracts.actions import WakeUp
from tests.conftest import Handle, fresh_key, signed_event, start
from tests.eventually import eventually
from tests.faults.conftest import send_key, target_mode
from tests.workflows.review_helpers import approve, seed_overdue_reviews, sent_to
from tests.workflows.soak_support import (
    customer,
    ops,
    run_histories,
)
from tollgate.dev.standins import StandIns
from workflows.budget import HISTORY_BUDGET_BYTES, HISTORY_BUDGET_EVENTS

__all__ = ["ops", "target_mode"]  # the fixtures: kill switch (soak_support.py), target modes

WEEK = timedelta(days=7)


async def woken_to_closed(client: Client, workflow_id: str) -> timedelta:
    """Simulated time from the (last) wake-up signal to the run's completion, as the history
    stamps them."""
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    signalled = [e.event_time.ToDatetime() for e in history.events
                 if e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED]
    assert signalled, "no wake-up in the last run's history"
    return history.events[-1].event_time.ToDatetime() - signalled[-1]


async def soak(env: WorkflowEnvironment, handle: Handle, days: timedelta) -> None:
    """Let ``days`` pass in simulated time, six hours at a time; the run stays held."""
    for _ in range(int(days / timedelta(hours=6))):
        await env.sleep(timedelta(hours=6))
        assert await handle.query("state") in (EventState.EXECUTING, EventState.HELD_AT_GATE)


def within_budget(sizes: list[tuple[int, int]]) -> str:
    report = ", ".join(f"run {i + 1}: {n} events / {b} bytes" for i, (n, b) in enumerate(sizes))
    print(f"history per run: {report}")
    assert all(n <= HISTORY_BUDGET_EVENTS + 20 and b <= HISTORY_BUDGET_BYTES
               for n, b in sizes), report
    return report


async def test_a_week_behind_a_closed_switch_then_sent_within_seconds_of_the_reopen(
    env: WorkflowEnvironment, worker_client: tuple[Client, str], standins: StandIns,
    ops: OpsStore, target_mode: str,
) -> None:
    client, queue = worker_client
    await ops.set_switch(adapter="messaging", tenant_id="acme", closed=True,
                         reason="incident 42", actor="op.kim")
    key = fresh_key("soak")
    handle = await start(client, queue, signed_event(customer(standins), key=key))
    await approve(handle)
    await soak(env, handle, WEEK)
    assert standins.messaging.posts_for(send_key(key)) == 0

    await ops.set_switch(adapter="messaging", tenant_id="acme", closed=False,
                         reason="fixed", actor="op.kim")
    await handle.signal("wake", WakeUp(cause="kill_switch:messaging/acme"))
    outcome = await handle.result()
    assert outcome.state == EventState.SUCCEEDED
    waited = await woken_to_closed(client, handle.id)
    assert waited < timedelta(seconds=5), f"sent {waited} after the wake-up"
    messages = [m for m in standins.messaging.messages() if m["idempotency_key"] == send_key(key)]
    assert len(messages) == 1
    sizes = await run_histories(client, handle.id)
    report = within_budget(sizes)
    assert len(sizes) >= 2, f"a week held should have continued as new: {report}"


async def test_a_week_held_at_the_gate_then_reviewed_and_sent_once(
    env: WorkflowEnvironment, worker_client: tuple[Client, str], standins: StandIns,
    database_url: str,
) -> None:
    client, queue = worker_client
    seeded = await seed_overdue_reviews(database_url, "globex", 10)  # globex backlog_limit 10
    who = customer(standins, tenant="globex")
    handle = await start(client, queue, signed_event(who, tenant="globex"))
    await eventually(lambda: handle.query("state"), "the event held at the gate",
                     until=lambda s: s == EventState.HELD_AT_GATE, timeout=20)
    await soak(env, handle, WEEK)
    conn = await asyncpg.connect(database_url)
    try:  # reviewers catch up
        await conn.execute("UPDATE events SET state = 'REJECTED' WHERE workflow_id = ANY($1)",
                           seeded)
    finally:
        await conn.close()
    await handle.signal("wake", WakeUp(cause="gate:globex"))
    await approve(handle)
    assert (await handle.result()).state == EventState.SUCCEEDED
    assert sent_to(standins, who) == 1
    sizes = await run_histories(client, handle.id)
    within_budget(sizes)
