"""What the webhook intake reads besides Tollgate's own envelope (ADR 0034, docs/api.md).

A post is a CloudEvent when its content type is ``application/cloudevents+json`` (structured
mode) or when it carries ``ce-`` headers (binary mode); it is mapped onto the envelope by
``tollgate.intake.ce_mapping`` and then checked like any other event. A Standard Webhooks
delivery's ``webhook-id`` is the idempotency key of an event whose body names none (it stays
the same on every retry of that delivery).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tollgate.http.webhook_auth import WEBHOOK_ID
from tollgate.intake import ce_mapping


@dataclass(frozen=True)
class Envelope:
    """The envelope's text, or why the post could not become one."""

    text: str = ""
    refusal: ce_mapping.CeRefusal | None = None


#: CloudEvents' batch mode: refused as such (one event per post), never read as Tollgate's own
#: batch, whose answer would name the envelope's fields the CloudEvents call otherwise.
BATCH_TYPE = "application/cloudevents-batch+json"


def _content_type(headers: Mapping[str, str]) -> str:
    return headers.get("content-type", "").split(";")[0].strip().lower()


def is_cloudevent(headers: Mapping[str, str]) -> bool:
    return _content_type(headers) in (ce_mapping.STRUCTURED_TYPE, BATCH_TYPE) \
        or "ce-specversion" in headers


def delivery_id(headers: Mapping[str, str], standard: bool) -> str | None:
    """``webhook-id`` of a Standard Webhooks post (signed with the body); None otherwise."""
    return headers.get(WEBHOOK_ID) if standard else None


def cloudevent_envelope(headers: Mapping[str, str], body: bytes, tenant: str,
                        delivery: str | None) -> Envelope:
    if _content_type(headers) == BATCH_TYPE:
        return Envelope(refusal=ce_mapping.CeRefusal(
            "bad_cloudevent", f"CloudEvents batch mode ({BATCH_TYPE}) is not taken: post "
            "each event on its own, in structured or binary mode"))
    event = ce_mapping.read_http(headers, body)
    if isinstance(event, ce_mapping.CeRefusal):
        return Envelope(refusal=event)
    mapped = ce_mapping.to_envelope(event, tenant, delivery)
    if isinstance(mapped, ce_mapping.CeRefusal):
        return Envelope(refusal=mapped)
    return Envelope(text=json.dumps(mapped, ensure_ascii=False))


def with_delivery_key(parsed: Any, text: str, delivery: str | None) -> tuple[Any, str]:
    """A single event without ``idempotency_key`` takes the delivery's id (a batch does not:
    its events would share one key)."""
    if delivery is None or not isinstance(parsed, dict) or "idempotency_key" in parsed:
        return parsed, text
    keyed = {**parsed, "idempotency_key": delivery}
    return keyed, json.dumps(keyed, ensure_ascii=False)
