"""One send whose answer was lost: its receipt UNKNOWN, as the reconciler finds it. Shared by
the reconciler's tests and those of a dead letter's replay."""

from __future__ import annotations

from adapters.postgres.receipts import ReceiptStore
from contracts import ActionRequest, EventRef, ReceiptStatus
from policies.keys import action_key
from tests.conftest import fresh_key


async def unknown_write(receipts: ReceiptStore,
                        adapter: str) -> tuple[EventRef, ActionRequest]:
    """A fresh acme event's ``send_message`` to ``adapter``, its receipt opened, one attempt
    begun and settled UNKNOWN (``timeout``): the event's reference and the action."""
    event_id = fresh_key("evt")
    ref = EventRef(workflow_id=f"event/acme/{event_id}", tenant_id="acme", event_id=event_id,
                   event_type="CARE_DUE", entity_id="C-1", correlation_id="corr", schema_version=3)
    action = ActionRequest(ref=ref, adapter=adapter, action="send_message",
                           action_key=action_key("acme", event_id, adapter, "send_message"),
                           channel="sms", body="hello", policy_version="v", approved_by="r")
    await receipts.open_receipt(action, "fp")
    fence = await receipts.begin_attempt(action.action_key)
    await receipts.settle(action.action_key, ReceiptStatus.UNKNOWN, fence=fence,
                          error_class="unknown_write", error_code="timeout")
    return ref, action
