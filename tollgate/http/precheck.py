"""What the HTTP intake can tell a producer at once, without Temporal.

The workflow's ``validate_event`` stays the authority (and quarantines what fails here, since
every posted event goes to the outbox); this check uses the same policy functions so that the
producer hears the reason code in the HTTP answer instead of finding it later.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

from pydantic import ValidationError

from activities.intake import MAX_CLOCK_SKEW
from contracts import EventEnvelope
from contracts.events import MAX_EVENT_CHARS
from policies import edge_text, signing
from policies.redaction import personal_data_kind
from policies.schemas import check_payload, describe_validation_error

_KIND = {"email": "an e-mail address", "phone": "a phone number"}


@dataclass(frozen=True)
class Checked:
    """``raw`` is what goes to the outbox (signed here when the producer left ``signature``
    out: the post's header HMAC already proved who sent these bytes)."""

    raw: str
    reason_code: str | None = None
    message: str | None = None


def _not_json(name: str) -> None:
    raise ValueError(f"{name} is not JSON")  # Python reads NaN/Infinity; PostgreSQL will not


def precheck(raw: str, secret: str, received_at: datetime) -> Checked:
    # The workflow's first two refusals too (activities/intake.py keeps its own): the producer
    # must hear "invalid" now, not find a quarantine later behind a 202.
    if len(raw) > MAX_EVENT_CHARS:
        return Checked(raw, "too_large", f"the event is {len(raw)} characters; the limit is "
                       f"{MAX_EVENT_CHARS}")
    try:
        data = json.loads(raw, parse_constant=_not_json)
    except ValueError:
        return Checked(raw, "malformed_json", f"the event {edge_text.why_not_json(raw)}")
    if not isinstance(data, dict):
        return Checked(raw, "malformed_json", "the event must be a JSON object")
    key = data.get("idempotency_key")
    kind = personal_data_kind(key) if isinstance(key, str) else None
    if kind is not None:
        return Checked(raw, "personal_data_in_key", f"idempotency_key looks like {_KIND[kind]}; "
                       "use an id that names no person (e.g. a record or order id)")
    if "signature" not in data:
        data = {**data, "signature": signing.sign(data, secret)}
        raw = json.dumps(data, ensure_ascii=False)
    try:
        event = EventEnvelope.model_validate(data)
    except ValidationError as exc:
        return Checked(raw, "bad_envelope", describe_validation_error(exc))
    if not signing.verify(data, secret):
        return Checked(raw, "bad_signature", "the envelope signature does not match the "
                       "tenant's key")
    if event.occurred_at > received_at + MAX_CLOCK_SKEW:
        return Checked(raw, "clock_skew", "occurred_at is in the future beyond the allowed skew")
    verdict = check_payload(event.event_type, event.schema_version, event.payload)
    if verdict.status == "unknown":
        return Checked(raw, "unknown_schema", verdict.detail)
    if verdict.status == "invalid":
        return Checked(raw, "bad_payload", verdict.detail)
    if verdict.status == "retired":
        return Checked(raw, "schema_drift", verdict.detail)
    return Checked(raw)
