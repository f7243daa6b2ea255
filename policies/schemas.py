"""The schema registry: which (event type, schema version) pairs Tollgate accepts.

A version listed as retired is schema drift, not garbage: the event goes to a dead letter with
a replay plan (upgrade the payload, replay) instead of quarantine. A version never heard of is
invalid input.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, StringConstraints, ValidationError

from contracts.base import ID_PATTERN
from contracts.fanout import OrderPlacedV1
from contracts.triage import MessageReceivedV1

Short = Annotated[str, StringConstraints(min_length=1, max_length=200)]


class CareDueV3(BaseModel):
    """A customer-care reminder due at ``due_at`` (e.g. a pet's vaccination)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    customer_id: Annotated[str, StringConstraints(pattern=ID_PATTERN)]
    reminder_kind: Literal["vaccination", "checkup", "grooming", "medication", "follow_up"]
    due_at: AwareDatetime
    channel: Literal["sms", "chat", "email"] = "sms"
    notes: Annotated[str, StringConstraints(max_length=2000)] | None = None


@dataclass(frozen=True)
class Retired:
    replay_plan: str


SCHEMAS: dict[tuple[str, int], type[BaseModel] | Retired] = {
    ("CARE_DUE", 3): CareDueV3,
    ("MESSAGE_RECEIVED", 1): MessageReceivedV1,
    # The fan-out's notify consumer hands its order to the control core (docs/fan-out.md).
    ("ORDER_PLACED", 1): OrderPlacedV1,
    ("CARE_DUE", 2): Retired(
        replay_plan="Producer still sends CARE_DUE v2: map pet_id->customer_id and "
        "kind->reminder_kind, bump schema_version to 3, and send it again under a new "
        "idempotency_key (nothing is replayed from `tollgate ops dlq`; the first key stays "
        "DEAD_LETTERED)."
    ),
}


@dataclass(frozen=True)
class SchemaVerdict:
    status: Literal["ok", "retired", "unknown", "invalid"]
    payload: BaseModel | None = None
    detail: str = ""


def check_payload(event_type: str, version: int, payload: dict[str, Any]) -> SchemaVerdict:
    """Validate a payload against the registry. ``detail`` names fields, never their values."""
    entry = SCHEMAS.get((event_type, version))
    if entry is None:
        known = sorted(v for (t, v) in SCHEMAS if t == event_type)
        detail = f"{event_type} v{version} is not registered" + (
            f" (known versions: {known})" if known else " (unknown event type)"
        )
        return SchemaVerdict("unknown", detail=detail)
    if isinstance(entry, Retired):
        return SchemaVerdict("retired", detail=entry.replay_plan)
    try:
        return SchemaVerdict("ok", payload=entry.model_validate(payload))
    except ValidationError as exc:
        return SchemaVerdict("invalid", detail=describe_validation_error(exc))


def describe_validation_error(exc: ValidationError) -> str:
    """Field paths and error kinds only: the offending values may be personal data."""
    parts = []
    for err in exc.errors()[:5]:
        loc = ".".join(str(p) for p in err["loc"]) or "(root)"
        parts.append(f"{loc}: {err['type']}")
    more = len(exc.errors()) - 5
    return "; ".join(parts) + (f" (+{more} more)" if more > 0 else "")
