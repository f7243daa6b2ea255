"""The triage domain in the demo (issue 32): one inbound message next to the care reminder.

A customer's refund question arrives as ``MESSAGE_RECEIVED``; the offline triage proposes the
billing queue, notes the missing order number and drafts a reply; the policy sends a reply to a
reviewer, who approves it; the helpdesk stand-in then holds exactly one assignment of that
ticket, with the reply. ``message_received`` builds the event for the demo, the examples and
the tests.
"""

from __future__ import annotations

import asyncio
import json
from datetime import datetime
from typing import Any

from temporalio.client import Client

from contracts import EventState, FinalOutcome, ReviewDecision
from policies.signing import sign_json
from tollgate.config.settings import Settings
from tollgate.dev.standins import HelpdeskStandIn
from tollgate.intake.submit import describe, submit
from tollgate.runtime.identity import issue_dev_token
from tollgate.runtime.run_end import run_result


def message_received(tenant: str, customer: str, key: str, *, body: str, now: datetime,
                     thread: str | None = None, channel: str = "chat",
                     **fields: Any) -> dict[str, Any]:
    """An unsigned ``MESSAGE_RECEIVED`` v1 envelope (``fields``: subject, order_id,
    sender_name, sent_at)."""
    payload: dict[str, Any] = {"customer_id": customer, "channel": channel,
                               "thread_id": thread or f"T-{key}", "body": body, **fields}
    return {
        "event_id": f"evt-{key}", "event_type": "MESSAGE_RECEIVED", "source": "chat-inbox",
        "tenant_id": tenant, "entity_id": customer, "schema_version": 1,
        "occurred_at": now.isoformat(), "correlation_id": f"corr-{key}",
        "idempotency_key": key, "payload": payload,
    }


#: The support lead who approves the triaged reply in the demo.
SUPPORT_LEAD = "mai.pham"


async def triage_scene(client: Client, settings: Settings, helpdesk: HelpdeskStandIn,
                       now: datetime) -> list[str]:
    """One message, triaged and reviewed; the problems found (empty: as stated)."""
    stamp = now.strftime("%Y%m%d%H%M%S")
    key = f"msg-C-1001-{stamp}"
    event = message_received(
        "acme", "C-1001", key, now=now, thread=f"T-{stamp}", sender_name="Lan Tran",
        body="I was charged twice for Miu's check-up last week. Can I get a refund?")
    thread = event["payload"]["thread_id"]
    ack = await submit(client, sign_json(json.dumps(event), settings.tenant_secrets()),
                       task_queue=settings.task_queue)
    print(f"\n== triage: a chat message from C-1001\n  {describe(ack)}")
    handle = client.get_workflow_handle(ack.workflow_id)
    for _ in range(300):  # a minute at most: the triage is offline and immediate
        if await handle.query("state") == EventState.AWAITING_REVIEW:
            break
        await asyncio.sleep(0.2)
    else:
        return [f"triage: {ack.workflow_id} did not reach AWAITING_REVIEW"]
    ticket = await handle.query("review_ticket")
    proposed = json.loads(ticket["draft"]["message"])
    print(f"  proposal v{ticket['draft_version']}: intent {proposed['intent']}, route "
          f"{proposed['queue']}, unknowns {ticket['draft']['unknowns']}")
    print(f"  reply draft (waits for a reviewer): {proposed['reply']!r}")
    token = issue_dev_token(settings.state_dir, reviewer=SUPPORT_LEAD, role="support_lead",
                            tenant="acme")
    await handle.execute_update("review", ReviewDecision(
        request_id=ticket["request_id"], decision="approve", reviewer=SUPPORT_LEAD,
        role="support_lead", reason="billing owns refunds; the reply asks for the order",
        draft_version=ticket["draft_version"], tenant_id="acme", token=token))
    outcome: FinalOutcome = (await run_result(client.get_workflow_handle(
        ack.workflow_id, result_type=FinalOutcome))).value
    stored = helpdesk.for_ticket(thread)
    receipt = outcome.receipt
    print(f"  {ack.workflow_id} {outcome.state.value} {outcome.reason_code or '-'} "
          f"{receipt.status if receipt else '-'} {receipt.external_id if receipt else '-'}")
    print(f"  assignments of {thread} at the helpdesk: {len(stored)}"
          + (f" (queue {stored[0]['queue']}, reply posted: {stored[0]['reply'] is not None})"
             if stored else ""))
    problems = []
    if outcome.state != EventState.SUCCEEDED:
        problems.append(f"triage: {outcome.state} (expected SUCCEEDED)")
    if (proposed["queue"], proposed["intent"]) != ("billing", "refund_request"):
        problems.append(f"triage: proposed {proposed['intent']} to {proposed['queue']}")
    if len(stored) != 1 or stored[0]["reply"] != proposed["reply"]:
        problems.append(f"triage: {len(stored)} assignments of {thread}, expected exactly 1 "
                        "with the approved reply")
    if receipt is None or not stored or receipt.external_id != stored[0]["id"]:
        problems.append("triage: the receipt does not name the helpdesk's assignment")
    return problems
