"""For the triage models' tests: a proposal and a triage request."""

from __future__ import annotations

from typing import Any

from contracts import DraftRequest, EventRef
from policies.matrix import load_matrix
from policies.triage_prompt import TRIAGE_PROMPT_VERSION

PROPOSAL: dict[str, Any] = {
    "intent": {"value": "refund_request", "source_refs": ["event.body"]},
    "route": {"value": "billing", "source_refs": ["event.body"]},
    "conflicts": [], "missing": [],
    "reply": {"message": "Hi Lan, thank you. Our billing team will look into order O-19.",
              "source_refs": ["crm.first_name", "event.order_id"]},
    "reason": "A double charge with an order number: billing owns refunds.",
    "confidence": 0.9,
}


CONTEXT = {
    "crm.first_name": "Lan", "crm.locale": "en", "event.channel": "chat",
    "event.thread_id": "T-881", "event.body": "I was charged twice for order O-19, refund please",
    "event.order_id": "O-19",
}


def request(tenant: str = "acme") -> DraftRequest:
    snapshot = load_matrix().rule_for(tenant, "MESSAGE_RECEIVED")
    assert snapshot is not None
    ref = EventRef(workflow_id=f"event/{tenant}/m-1", tenant_id=tenant, event_id="evt-m-1",
                   event_type="MESSAGE_RECEIVED", entity_id="C-1001", correlation_id="c-1",
                   schema_version=1)
    return DraftRequest(ref=ref, context=CONTEXT, policy_version=snapshot.version,
                        prompt_version=TRIAGE_PROMPT_VERSION, rule=snapshot.rule)
