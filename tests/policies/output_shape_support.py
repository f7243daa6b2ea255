"""For the output shape tests: a draft request and a policy rule."""

from __future__ import annotations

from typing import Any

from contracts import DraftRequest, EventRef, PolicyRule

CONTEXT = {"crm.first_name": "Lan", "crm.pet_name": "Miu", "crm.locale": "en",
           "event.due_at": "2026-12-01T09:00:00+00:00"}


def rule(stop_flags: list[str] | None = None, **shape: Any) -> PolicyRule:
    return PolicyRule.model_validate({
        "approver_roles": ["reviewer"], "consent_required": True, "max_context_age": "P1D",
        "max_messages_per_customer_per_day": 1, "separation_of_duties": True,
        "review_sla": "PT4H", "review_deadline": "PT24H", "fallback_owner": "care-ops",
        "risk": "medium", "max_info_rounds": 1, "backlog_limit": 10, "adapter": "messaging",
        "action": "send_message", "output": shape, "stop_flags": stop_flags,
    })


def request(policy: PolicyRule | None, **context: str) -> DraftRequest:
    return DraftRequest(
        ref=EventRef(workflow_id="event/acme/k1", tenant_id="acme", event_id="e1",
                     event_type="CARE_DUE", entity_id="C-1", correlation_id="c1",
                     schema_version=3),
        context={**CONTEXT, **context}, policy_version="2026-12-01.1",
        prompt_version="care-reminder-v2", rule=policy,
    )
