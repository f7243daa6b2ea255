"""Redaction: what may leave the process in logs, errors, quarantine rows and dead letters.

Identifiers and shapes survive; free text and anything that could be personal data does not.
Pure, so the logging processor, the activities and the workflows share one rule.
"""

from __future__ import annotations

from typing import Any

from policies.draft_validator import redact as redact_text

#: Fields whose values are identifiers or enums, safe to keep as they are.
SAFE_KEYS = frozenset(
    {
        "event_id", "event_type", "source", "tenant_id", "entity_id", "schema_version",
        "correlation_id", "idempotency_key", "occurred_at", "received_at", "customer_id",
        "reminder_kind", "channel", "due_at", "workflow_id", "action_key", "adapter", "action",
        "status", "state", "reason_code", "error_class", "error_code", "policy_version",
        "external_id", "draft_version", "request_id", "reviewer", "role", "provider", "model",
    }
)
_MAX_DEPTH = 6

# Free text is scrubbed by the validator's own rule (e-mails, phones, Luhn-valid card numbers,
# token shapes), so a log line and a reviewer's raw excerpt are masked alike.
scrub_text = redact_text


def redact(value: Any, *, key: str | None = None, depth: int = 0) -> Any:
    """Keep structure and safe identifiers; replace other scalars with a type-and-size tag."""
    if depth > _MAX_DEPTH:
        return "[nested]"
    if isinstance(value, dict):
        return {str(k): redact(v, key=str(k), depth=depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v, key=key, depth=depth + 1) for v in value[:20]]
    if key in SAFE_KEYS and isinstance(value, str | int | float | bool) and len(str(value)) <= 200:
        return value
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return f"[text:{len(value)}]"
    return f"[{type(value).__name__}]"
