"""The Redis Streams consumer loop: stream entries become intake answers (docs/redis-intake.md).

``python -m tollgate.runtime.redis_intake`` runs it against ``TOLLGATE_REDIS_URL`` and Temporal
from the usual settings. An entry's ``body`` field is the event:

- Tollgate's envelope, signed by its tenant as for ``tollgate submit``; or
- a CloudEvent, structured (``content-type`` ``application/cloudevents+json``) or binary
  (``ce-`` fields beside a JSON ``body``), mapped by ``ce_mapping`` and carrying a
  ``signature`` field over the entry (``policies/entry_signing.py``): the CloudEvent has no
  place for one, and a stream has no transport that vouches for the producer.

Each event goes through ``submit()``, the same path as ``tollgate submit`` and the HTTP relay,
and the entry is acked once its answer is durable: accepted, duplicate, or quarantined (an
envelope the workflow refuses: bad signature, schema, tenant, clock). What cannot become an
event at all (no body, not UTF-8, the edge text rules of ``policies.edge_text``, too large, an
incomplete or unsigned CloudEvent) is moved to the dead-letter stream with its reason before
anything reaches Temporal (ADR 0032); so is an entry delivered too often without an answer.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Mapping

import structlog
from temporalio.client import Client

from adapters.broker.redis_outage import Probe, Unreachable
from adapters.broker.redis_streams import (
    Handler,
    Outcome,
    RedisStreamIntake,
    StreamEntry,
    StreamLimits,
)
from contracts.errors import InvalidInput
from contracts.events import MAX_EVENT_CHARS
from policies import edge_text, signing
from policies.entry_signing import SIGNATURE_FIELD, verify_entry
from tollgate.config.settings import Settings
from tollgate.intake import ce_mapping
from tollgate.intake.edge import text_refusal
from tollgate.intake.reach import takes_events, unreachable_status
from tollgate.intake.recorded import RecordedEnd
from tollgate.intake.submit import submit
from tollgate.observability.messaging import stream_span

log = structlog.get_logger("tollgate.redis_intake")

BODY, CONTENT_TYPE = b"body", b"content-type"
#: A body's UTF-8 is at most four bytes a character: past this it cannot be within the limit.
MAX_BODY_BYTES = 4 * MAX_EVENT_CHARS
_ANSWER: dict[str, Outcome] = {"accepted": "accepted", "duplicate": "duplicate",
                               "invalid": "quarantined"}


def _text(value: bytes, name: str) -> str:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput("not_utf8", f"the entry's `{name}` is not UTF-8") from None


def entry_event(entry: StreamEntry, tenant_secrets: Mapping[str, str]) -> str:
    """The envelope text ``entry`` stands for; a one-line ``InvalidInput``
    (``{rule}: {where}: {why}``) for anything that cannot be one."""
    body = entry.fields.get(BODY)
    if body is None:
        raise InvalidInput("no_body", "the entry has no `body` field")
    if len(body) > MAX_BODY_BYTES:
        raise InvalidInput("too_large", f"$: the body is {len(body)} bytes; the limit is "
                           f"{MAX_EVENT_CHARS} characters")
    text = _text(body, "body")
    others = {_text(k, "field name"): _text(v, "field") for k, v in entry.fields.items()
              if k not in (BODY, SIGNATURE_FIELD)}
    content_type = others.pop(CONTENT_TYPE.decode(), None)
    if _is_cloudevent(others, content_type):
        return _cloudevent_envelope(entry, others, content_type, body, tenant_secrets)
    _, violation = edge_text.load_json(text, max_chars=MAX_EVENT_CHARS)
    if violation is not None:
        raise InvalidInput(violation.rule, violation.message)
    return text


def _is_cloudevent(fields: Mapping[str, str], content_type: str | None) -> bool:
    return (content_type or "").split(";")[0].strip().lower() == ce_mapping.STRUCTURED_TYPE \
        or any(name.lower().startswith("ce-") for name in fields)


def _cloudevent_envelope(entry: StreamEntry, fields: Mapping[str, str],
                         content_type: str | None, body: bytes,
                         tenant_secrets: Mapping[str, str]) -> str:
    # The entry carries the same three parts as a RabbitMQ message (``ce-`` attributes, a
    # content type, a body) and the SDK has no Redis binding: its AMQP one reads them alike.
    event = ce_mapping.read_rabbitmq(fields, content_type, body)
    mapped = event if isinstance(event, ce_mapping.CeRefusal) else \
        ce_mapping.to_envelope(event, tenant="")
    if isinstance(mapped, ce_mapping.CeRefusal):
        raise InvalidInput(mapped.reason_code, mapped.message)
    tenant = mapped["tenant_id"]
    if not tenant:
        raise InvalidInput("cloudevent_incomplete", f"the CloudEvent has no "
                           f"`{ce_mapping.TENANT}` extension attribute (Tollgate's tenant_id)")
    secret = tenant_secrets.get(tenant) if isinstance(tenant, str) else None
    if secret is None:
        raise InvalidInput("unknown_tenant", "ce-tenant: not a known tenant")
    if SIGNATURE_FIELD not in entry.fields:
        raise InvalidInput("signature_missing", "the entry has no `signature` field")
    if not verify_entry(entry.fields, secret):
        raise InvalidInput("bad_signature", "signature: does not match the tenant's key")
    # The entry's signature proved who sent these fields, so the envelope is signed for them
    # (as the HTTP intake does after a post's HMAC header).
    raw = json.dumps({**mapped, "signature": signing.sign(mapped, secret)}, ensure_ascii=False)
    refusal = text_refusal(raw)
    if refusal is not None:
        raise InvalidInput(refusal.reason_code, refusal.message)
    return raw


def entry_handler(client: Client, task_queue: str, tenant_secrets: Mapping[str, str],
                  recorded: RecordedEnd | None = None) -> Handler:
    async def handle(entry: StreamEntry) -> Outcome:
        with stream_span(entry) as span:  # a no-op while tracing is off
            raw = entry_event(entry, tenant_secrets)
            try:
                ack = await submit(client, raw, task_queue=task_queue,
                                   tenant_secrets=tenant_secrets, recorded=recorded)
            except Exception as exc:
                if (status := unreachable_status(exc)) is not None:
                    raise Unreachable(status) from None  # an outage: the try is not counted
                raise
            answer = _ANSWER[ack.status]
            span.set_attribute("tollgate.intake.outcome", answer)
        log.info("stream_entry", entry_id=entry.entry_id, answer=answer,
                 workflow_id=ack.workflow_id, reason_code=ack.reason_code)
        return answer

    return handle


def temporal_probe(client: Client, task_queue: str) -> Probe:
    """Can entries be handed on? (The server answers and a worker polls the queue.)"""
    async def probe() -> bool:
        return await takes_events(client, task_queue)

    return probe


def report_problem(kind: str, **fields: str) -> None:
    """The adapter's trouble as a warning (``stream_no_answer``, ``stream_dead_lettered``,
    ``stream_redis_unavailable``, ``stream_trimmed_before_ack``, ``stream_temporal_unreachable``)
    or, for the end of an outage (``stream_temporal_reachable``), information: ids, reason
    codes, counts and class names only."""
    if kind == "temporal_reachable":
        log.info(f"stream_{kind}", **fields)
    else:
        log.warning(f"stream_{kind}", **fields)


def intake_for(settings: Settings) -> RedisStreamIntake:
    s = settings.redis
    if s.url is None:
        raise SystemExit("TOLLGATE_REDIS_URL is not set (redis://host:6379/0)")
    consumer = s.consumer or f"{socket.gethostname()}-{os.getpid()}"
    return RedisStreamIntake(
        s.url.get_secret_value(), consumer, stream=s.stream, group=s.group,
        dead_stream=s.dead_stream, report=report_problem,
        limits=StreamLimits(claim_idle_s=s.claim_idle_s, max_deliveries=s.max_deliveries,
                            handler_timeout_s=s.handler_timeout_s))
