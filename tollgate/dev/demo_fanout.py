"""The demo's fan-out scene (seed 002, docs/fan-out.md), beside the care reminder on the same
stack and worker.

One ORDER_PLACED goes to inventory (the stock cache sync), notify and analytics, with analytics
down. Inventory is delivered; analytics retries by its own policy and ends in its own dead
letter; notify hands the order to the control core, whose order confirmation waits for a named
reviewer. Nothing is sent before the approval; after it, exactly one message, one receipt.
Publishing the same order again is a duplicate: no second child, no second message. The scene
reads its claims back from where they are recorded (the messaging stand-in, PostgreSQL) and
names any that do not hold (``demo_evidence.confirmation_missing``).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
from temporalio.client import Client, WorkflowHandle

from contracts import EventState, FinalOutcome, ReviewDecision
from contracts.fanout import BusinessEvent, FanOutResult
from policies.keys import action_key, fan_out_id
from tollgate.dev.demo_evidence import Confirmation, confirmation_missing
from tollgate.dev.standins.messaging import MessagingStandIn
from tollgate.intake.publish import publish_event
from tollgate.runtime.identity import issue_dev_token
from tollgate.runtime.run_end import run_result

#: The demo worker runs with this consumer down (TOLLGATE_CONSUMERS_DOWN).
DOWN_CONSUMER = "analytics"
ORDER_EVENT_ID = "order-demo-1001"
ORDER_DESK = "minh.pham"


@dataclass(frozen=True)
class OrderDesk:
    """What the scene needs to act as the order desk: the dev stack's state folder (for a
    reviewer's token, as `tollgate dev token` issues one) and the messaging stand-in (to count
    what reached the customer)."""

    state_dir: Path
    messaging: MessagingStandIn


async def fan_out_scene(client: Client, pool: asyncpg.Pool, task_queue: str,
                        desk: OrderDesk) -> list[str]:
    event = BusinessEvent(
        event_id=ORDER_EVENT_ID, event_type="ORDER_PLACED", schema_version=1,
        tenant_id="acme", occurred_at=datetime.now(UTC),
        payload={"order_id": "O-1001", "customer_id": "C-1001", "total_cents": 4590,
                 "lines": [{"sku": "SKU-CAT-FOOD", "quantity": 2}]})
    first = await publish_event(client, task_queue, event)
    result: FanOutResult = (await run_result(client.get_workflow_handle(
        fan_out_id(event.event_id), result_type=FanOutResult))).value
    print(f"\n  fan-out: {event.event_id} {first}")
    for r in result.results:
        print(f"    {r.consumer:13} {r.status:14} {r.error or r.workflow_id or ''}".rstrip())
    problems = _statuses(result)
    child = next((r.workflow_id for r in result.results if r.consumer == "notify"), None)
    if child is None:
        return problems
    key = action_key("acme", f"{event.event_id}.notify", "messaging", "send_message")
    handle = client.get_workflow_handle(child, result_type=FinalOutcome)
    ticket = await _ticket_when_in_review(handle)
    before = desk.messaging.posts_for(key)
    print(f"    order desk {ORDER_DESK} approves the confirmation: "
          f"{ticket['draft']['message']!r}")
    token = issue_dev_token(desk.state_dir, reviewer=ORDER_DESK, role="order_desk",
                            tenant="acme")
    await handle.execute_update("review", ReviewDecision(
        request_id=ticket["request_id"], decision="approve", reviewer=ORDER_DESK,
        role="order_desk", reason="order and total match", tenant_id="acme",
        draft_version=ticket["draft_version"], token=token))
    outcome = (await run_result(handle)).value
    again = await publish_event(client, task_queue, event)
    seen = Confirmation(
        outcome=outcome, posts_before_approval=before, posts=desk.messaging.posts_for(key),
        republished=again, children=int(await pool.fetchval(
            "SELECT count(*) FROM events WHERE correlation_id = $1", event.event_id)),
        dead_letters=sorted(await _dead_letters(pool, event.event_id)))
    print(f"    confirmation {outcome.state.value}: "
          f"{seen.posts} message after the approval, {seen.posts_before_approval} before; "
          f"published again: {again}, children {seen.children}")
    return problems + confirmation_missing(seen)


def _statuses(result: FanOutResult) -> list[str]:
    statuses = {r.consumer: r.status for r in result.results}
    want = {"inventory": "delivered", "notify": "handed_over", DOWN_CONSUMER: "dead_lettered"}
    return [] if statuses == want else [f"fan-out: {statuses} (expected {want})"]


async def _ticket_when_in_review(handle: WorkflowHandle[Any, FinalOutcome]) -> dict[str, Any]:
    for _ in range(300):  # 60 s: context, the offline draft and the gate take well under that
        ticket: dict[str, Any] = await handle.query("review_ticket")
        if ticket["state"] == EventState.AWAITING_REVIEW:
            return ticket
        await asyncio.sleep(0.2)
    raise AssertionError(f"{handle.id} did not reach AWAITING_REVIEW")


async def _dead_letters(pool: asyncpg.Pool, event_id: str) -> list[str]:
    rows = await pool.fetch("SELECT consumer FROM consumer_dead_letters WHERE event_id = $1",
                            event_id)
    return [r["consumer"] for r in rows]
