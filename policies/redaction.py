"""Redaction: what may leave the process in logs, errors, quarantine rows and dead letters.

Identifiers and shapes survive; free text and anything that could be personal data does not.
Pure, so the logging processor, the activities and the workflows share one rule.
"""

from __future__ import annotations

import re
from typing import Any

from policies.sensitive import redact as redact_text

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
_SEPARATORS = re.compile(r"[\s.()+\-]")
#: A Vietnamese mobile number inside a longer identifier: 0 or 84, a mobile prefix, 8 digits.
_VN_MOBILE = re.compile(r"(?<!\d)(?:84|0)[35789]\d{8}(?!\d)")

# Free text is scrubbed by the validator's own rule (e-mails, phones, Luhn-valid card numbers,
# token shapes), so a log line and a reviewer's raw excerpt are masked alike. Taken from where
# the validator takes it, policies.sensitive: the validator pulls every contract (pydantic),
# and every process configures logging first, `tollgate --help` included.
scrub_text = redact_text

#: What a log line may carry as it is, for an operator to match it to a run in the Web UI:
#: a UUID in its dashed form (run ids, update ids) and an ISO 8601 date-time. Neither is a
#: token or a phone number, though their digits and length look like one to ``scrub_text``.
#: Only the dashed form: 32 bare hex digits are also what a secret from ``token_hex`` is.
_LOG_IDS = re.compile(
    r"(?<![\w@.])[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
    r"(?![\w-]|[@.]\w)"
    r"|(?<!\d)\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?"
    r"(?:Z|[+-]\d{2}:?\d{2})?(?![\d:])"
)


def scrub_log_text(value: str) -> str:
    """``scrub_text`` for a log line: run and update ids and timestamps stay as they are."""
    kept, out, start = _LOG_IDS.finditer(value), [], 0
    for found in kept:
        out += [scrub_text(value[start:found.start()]) if found.start() > start else "",
                found.group()]
        start = found.end()
    out.append(scrub_text(value[start:]) if start < len(value) else "")
    return "".join(out)


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


#: Field names whose values never reach a log line, whatever their shape.
DROP_KEYS = frozenset(
    {
        "body", "message_text", "payload", "context", "secret", "api_key", "token", "password",
        "authorization", "signature", "raw", "prompt", "first_name", "last_name", "full_name",
        "customer_name", "pet_name", "phone", "email", "address", "notes", "draft",
    }
)
#: Keys a log line carries that look like digits but are never personal (timestamps, counts).
LOG_SAFE_KEYS = SAFE_KEYS | {"timestamp", "level", "logger", "attempt", "lineno", "duration_ms"}


def scrub_deep(value: Any, *, key: str | None = None, depth: int = 0) -> Any:
    """Redaction for logs: same structure, dropped fields by name, e-mail addresses and phone
    numbers masked in every string however deep, exceptions reduced to type and scrubbed text.
    """
    if key is not None and key.lower() in DROP_KEYS and value not in (None, "", [], {}):
        return "[redacted]"
    if depth > _MAX_DEPTH:
        return "[nested]"
    if isinstance(value, str):
        return value if key in LOG_SAFE_KEYS else scrub_log_text(value)
    if isinstance(value, dict):
        return {k: scrub_deep(v, key=str(k), depth=depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [scrub_deep(v, key=key, depth=depth + 1) for v in value]
    if isinstance(value, BaseException):
        return f"{type(value).__name__}: {scrub_log_text(str(value))}"
    if value is None or isinstance(value, bool | int | float):
        return value
    return scrub_log_text(str(value))


def personal_data_kind(value: str) -> str | None:
    """``"email"`` or ``"phone"`` when an identifier looks like one, else None.

    Workflow ids, search attributes and task queues are stored in clear by Temporal, so a key
    that carries a customer's contact must be refused before it becomes part of one.
    """
    if "@" in value or "[email]" in scrub_text(value):
        return "email"
    bare = _SEPARATORS.sub("", value)
    if bare.isdigit() and 9 <= len(bare) <= 15:
        return "phone"
    if _VN_MOBILE.search(_SEPARATORS.sub("", value)):
        return "phone"
    return None
