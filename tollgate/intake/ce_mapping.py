"""CloudEvents 1.0 onto Tollgate's events, through the ``cloudevents`` SDK (docs/api.md).

Both transports that carry them (HTTP: ``tollgate/http/protocols.py``; RabbitMQ:
``tollgate/intake/broker.py``) read the event with the SDK's binding for that transport, then map
it here:

    id -> event_id          type -> event_type       source -> source
    time -> occurred_at     subject -> entity_id      data (a JSON object) -> payload
    extensions: tenant -> tenant_id, schemaversion -> schema_version,
                correlationid -> correlation_id (else the id),
                idempotencykey -> idempotency_key (else the delivery's id, else the event id)

The SDK fills a missing ``id`` (a random UUID) and ``time`` (now) on its own; an event without
them must be refused instead (a random id defeats idempotency, a made-up time defeats the
freshness checks), so their presence is checked before the SDK reads the event. Whatever an
event lacks of what Tollgate needs is a ``CeRefusal`` with a reason code, and the caller
quarantines it like any other refused event.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cloudevents.core.base import BaseCloudEvent
from cloudevents.core.bindings import http as ce_http
from cloudevents.core.bindings import rabbitmq as ce_rabbitmq
from cloudevents.core.exceptions import BaseCloudEventException
from cloudevents.core.formats.json import JSONFormat
from cloudevents.core.v1.event import CloudEvent

from contracts.events import MAX_EVENT_CHARS
from policies import edge_text
from tollgate.intake.edge import refusal_for

STRUCTURED_TYPE = JSONFormat.CONTENT_TYPE  # application/cloudevents+json
#: Extension attributes Tollgate reads (CloudEvents names: lower-case letters and digits).
TENANT, SCHEMA_VERSION, CORRELATION, IDEMPOTENCY = (
    "tenant", "schemaversion", "correlationid", "idempotencykey")
#: What the SDK would invent when absent, and the envelope field each stands for.
_NOT_INVENTED = {"id": "event_id", "time": "occurred_at"}
_READ_ERRORS = (ValueError, TypeError, KeyError, OverflowError, BaseCloudEventException)


@dataclass(frozen=True)
class CeRefusal:
    reason_code: str
    message: str


def _refused(message: str) -> CeRefusal:
    return CeRefusal("bad_cloudevent", message)


def _text_refused(bad: edge_text.Violation) -> CeRefusal:
    """An edge rule's refusal under the reason code a plain event gets for it."""
    refusal = refusal_for(bad)
    return CeRefusal(refusal.reason_code, refusal.message)


def _present(attributes: Mapping[str, Any]) -> CeRefusal | None:
    for name, field in _NOT_INVENTED.items():
        if not attributes.get(name):
            return CeRefusal("cloudevent_incomplete", f"the CloudEvent has no `{name}` "
                             f"(Tollgate's {field})")
    return None


def _json_data(body: bytes, content_type: str | None) -> CeRefusal | None:
    """Binary mode: a JSON data body is parsed with the edge's size and depth rules first."""
    if content_type is None or JSONFormat.JSON_CONTENT_TYPE_PATTERN.match(content_type):
        _, bad = edge_text.parse_json(body.decode("utf-8", errors="replace"),
                                      max_chars=MAX_EVENT_CHARS)
        if bad is not None and bad.rule != "not_json":
            return _text_refused(bad)
    return None


def read_http(headers: Mapping[str, str], body: bytes) -> BaseCloudEvent | CeRefusal:
    """Structured mode (``application/cloudevents+json``) or binary mode (``ce-`` headers)."""
    lowered = {k.lower(): v for k, v in headers.items()}
    try:
        if any(k.startswith(ce_http.CE_PREFIX) for k in lowered):
            found = _present({k[3:]: v for k, v in lowered.items()
                              if k.startswith(ce_http.CE_PREFIX)})
            found = found or _json_data(body, lowered.get("content-type"))
            return found or ce_http.from_binary(
                ce_http.HTTPMessage(lowered, body), JSONFormat(), CloudEvent)
        return _structured(body, lambda: ce_http.from_structured(
            ce_http.HTTPMessage(lowered, body), JSONFormat(), CloudEvent))
    except _READ_ERRORS as exc:
        return _refused(_describe(exc))


def read_rabbitmq(headers: Mapping[str, Any], content_type: str | None,
                  body: bytes) -> BaseCloudEvent | CeRefusal:
    """A broker message: binary mode when it has ``ce-`` headers, else structured."""
    texts = {str(k).lower(): v if isinstance(v, str) else str(v) for k, v in headers.items()}
    message = ce_rabbitmq.RabbitMQMessage(texts, content_type, body)
    try:
        if any(k.startswith(ce_rabbitmq.CE_PREFIX) for k in texts):
            found = _present({k[3:]: v for k, v in texts.items()
                              if k.startswith(ce_rabbitmq.CE_PREFIX)})
            found = found or _json_data(body, content_type)
            return found or ce_rabbitmq.from_binary(message, JSONFormat(), CloudEvent)
        return _structured(body, lambda: ce_rabbitmq.from_structured(
            message, JSONFormat(), CloudEvent))
    except _READ_ERRORS as exc:
        return _refused(_describe(exc))


def _structured(body: bytes, read: Any) -> BaseCloudEvent | CeRefusal:
    parsed, bad = edge_text.parse_json(body.decode("utf-8", errors="replace"),
                                       max_chars=MAX_EVENT_CHARS)
    if bad is not None:
        return _refused("the body is not a CloudEvent in JSON") if bad.rule == "not_json" \
            else _text_refused(bad)
    if not isinstance(parsed, dict):
        return _refused("a structured CloudEvent is one JSON object")
    found = _present(parsed)
    if found is not None:
        return found
    event: BaseCloudEvent = read()
    return event


def _describe(exc: Exception) -> str:
    """The SDK's reason, without the values it was given (they are the producer's data)."""
    if isinstance(exc, BaseCloudEventException) and hasattr(exc, "errors"):
        names = ", ".join(sorted(exc.errors))
        return f"the CloudEvent's attributes are not valid: {names}"
    name = getattr(exc, "attribute_name", None)
    if name:
        return f"the CloudEvent's `{name}` is not valid"
    return "the CloudEvent could not be read (a time that is not RFC 3339?)"


def _data(event: BaseCloudEvent) -> dict[str, Any] | CeRefusal:
    data = event.get_data()
    if not isinstance(data, dict):
        return CeRefusal("cloudevent_incomplete", "the CloudEvent's data must be a JSON object "
                         "(datacontenttype application/json)")
    return data


def _common(event: BaseCloudEvent) -> dict[str, Any] | CeRefusal:
    payload = _data(event)
    if isinstance(payload, CeRefusal):
        return payload
    version = event.get_extension(SCHEMA_VERSION)
    if version is None:
        return CeRefusal("cloudevent_incomplete", f"the CloudEvent has no `{SCHEMA_VERSION}` "
                         "extension attribute (Tollgate's schema_version)")
    time = event.get_time()
    return {"event_id": event.get_id(), "event_type": event.get_type(),
            "schema_version": _number(version),
            "occurred_at": time.isoformat() if time is not None else None, "payload": payload}


def _number(value: Any) -> Any:
    """A digit string as its integer, anything else as it came (the envelope's model refuses
    it, naming ``schema_version``). ``str.isdigit`` alone passes ``²`` and 5,000 digits, which
    ``int`` refuses: that was a 500 over HTTP and a message requeued for ever on the broker."""
    text = str(value)
    if not (text.isascii() and text.isdigit() and len(text) <= 19):
        return value
    return int(text)


def to_envelope(event: BaseCloudEvent, tenant: str,
                delivery_id: str | None = None) -> dict[str, Any] | CeRefusal:
    """The envelope a CloudEvent stands for (unsigned: the transport's signature vouches)."""
    common = _common(event)
    if isinstance(common, CeRefusal):
        return common
    subject = event.get_subject()
    if not subject:
        return CeRefusal("cloudevent_incomplete", "the CloudEvent has no `subject` "
                         "(Tollgate's entity_id)")
    key = event.get_extension(IDEMPOTENCY) or delivery_id or event.get_id()
    return {**common, "source": event.get_source(), "entity_id": subject,
            "tenant_id": event.get_extension(TENANT) or tenant,
            "correlation_id": event.get_extension(CORRELATION) or event.get_id(),
            "idempotency_key": key}


def to_business_event(event: BaseCloudEvent) -> dict[str, Any] | CeRefusal:
    """The bus's ``BusinessEvent`` fields (the broker has no signer: the tenant is required)."""
    common = _common(event)
    if isinstance(common, CeRefusal):
        return common
    tenant = event.get_extension(TENANT)
    if not tenant:
        return CeRefusal("cloudevent_incomplete", f"the CloudEvent has no `{TENANT}` "
                         "extension attribute (Tollgate's tenant_id)")
    return {**common, "tenant_id": tenant}
