"""The triage domain in the demo (issue 32): one inbound message next to the care reminder.

A customer's refund question arrives as ``MESSAGE_RECEIVED``; the offline triage proposes the
billing queue, notes the missing order number and drafts a reply; the policy sends a reply to a
reviewer, who approves it; the helpdesk stand-in then holds exactly one assignment of that
ticket, with the reply. ``message_received`` builds the event for the demo, the examples and
the tests.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any


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
