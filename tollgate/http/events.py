"""``POST /v1/events``: signed webhook intake, answered from PostgreSQL alone.

Order of checks: size (413), signature and tenant (401/403), the text (422: NUL, lone
surrogates, control characters, nesting, numbers, sizes; ``policies.edge_text``), rate (429),
then each event is recorded with its outbox row and answered 202 / 200 duplicate / 409 conflict
/ 422 invalid. Invalid events are queued too, so the workflow quarantines them: nothing posted is
dropped. An event whose text is refused is quarantined here at once, without its text (it could
not be stored or sent), under a hash id that never takes its business key (ADR 0032).
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from adapters.postgres.store import PostgresStore
from policies import edge_text
from policies.keys import payload_fingerprint, quarantine_workflow_id
from tollgate.http import protocols
from tollgate.http.deps import Services, services
from tollgate.http.precheck import precheck
from tollgate.http.webhook_auth import check_post, check_standard
from tollgate.intake import submit as intake
from tollgate.intake.ce_mapping import CeRefusal
from tollgate.intake.edge import refusal_for

router = APIRouter(tags=["events"])
Svc = Annotated[Services, Depends(services)]

#: Earlier outcomes that make a repeated delivery invalid rather than a duplicate.
_INVALID_STATES = {"QUARANTINED", "DEAD_LETTERED", "SUPERSEDED"}


class EventAnswer(BaseModel):
    """One event's answer; ``http_status`` repeats the status code (useful inside a batch)."""

    http_status: int
    status: Literal["accepted", "duplicate", "conflict", "invalid"]
    workflow_id: str
    reason_code: str | None = None
    message: str | None = None
    #: For a refused text: the JSON path of the field and the rule it broke (docs/api.md).
    field: str | None = None
    rule: str | None = None
    state: str | None = None
    previous: dict[str, Any] | None = None


class BatchAnswer(BaseModel):
    results: list[EventAnswer]


class Problem(BaseModel):
    code: str
    message: str


_PROBLEMS: dict[int | str, dict[str, Any]] = {
    code: {"model": Problem, "description": what} for code, what in (
        (401, "missing, stale or wrong signature"), (403, "unknown tenant, or an event of "
        "another tenant"), (413, "body too large"), (429, "tenant over its intake rate"))
}

#: An invalid event is answered for its workflow (quarantined); an empty or oversized batch is
#: a problem of the request, with no workflow.
_INVALID: dict[int | str, dict[str, Any]] = {
    422: {"model": EventAnswer | Problem, "description": "an invalid event (quarantined), or "
          "an empty batch"}}


def _problem(status: int, code: str, message: str, **headers: str) -> JSONResponse:
    return JSONResponse({"code": code, "message": message}, status_code=status, headers=headers)


async def _read_limited(request: Request, limit: int) -> bytes | None:
    """The body, or None as soon as it passes ``limit`` bytes (never buffered past it)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


@router.post(
    "/v1/events", status_code=202, response_model=EventAnswer | BatchAnswer,
    responses={200: {"description": "duplicate (single event), or a batch's answers"},
               409: {"model": EventAnswer}, **_INVALID, **_PROBLEMS},
    openapi_extra={"requestBody": {"required": True, "content": {"application/json": {
        "schema": {"oneOf": [{"type": "object"}, {"type": "array", "items": {"type": "object"}}]},
    }}}},
)
async def post_events(request: Request, svc: Svc) -> JSONResponse:
    """Accept one event (a JSON object) or a batch (an array), or a CloudEvent, signed with
    the tenant's key (``X-Tollgate-*`` headers)."""
    return await _intake(request, svc, None)


@router.post(
    "/v1/events/{tenant}", status_code=202, response_model=EventAnswer | BatchAnswer,
    responses={200: {"description": "duplicate (single event), or a batch's answers"},
               409: {"model": EventAnswer}, **_INVALID, **_PROBLEMS},
    openapi_extra={"requestBody": {"required": True, "content": {
        "application/json": {"schema": {"oneOf": [
            {"type": "object"}, {"type": "array", "items": {"type": "object"}}]}},
        "application/cloudevents+json": {"schema": {"type": "object"}}}}},
)
async def post_standard_webhook(tenant: str, request: Request, svc: Svc) -> JSONResponse:
    """The same, signed the Standard Webhooks way (``webhook-id``, ``webhook-timestamp``,
    ``webhook-signature``) for the tenant in the path; ``webhook-id`` is the idempotency key
    of an event that names none."""
    return await _intake(request, svc, tenant)


async def _intake(request: Request, svc: Services, standard: str | None) -> JSONResponse:
    body = await _read_limited(request, svc.max_body)
    if body is None:
        return _problem(413, "too_large", f"the body is over {svc.max_body} bytes")
    if standard is None:
        tenant, auth = check_post(request.headers, body, svc.tenant_secrets, svc.clock())
    else:
        tenant = standard
        auth = check_standard(request.headers, body, tenant, svc.tenant_secrets, svc.clock())
    if auth is not None:
        return _problem(auth.status, auth.code, auth.message)
    delivery = protocols.delivery_id(request.headers, standard is not None)
    # Undecodable bytes become U+FFFD: such a body is malformed anyway, and it must still be
    # stored to be quarantined.
    text = body.decode("utf-8", errors="replace")
    if protocols.is_cloudevent(request.headers):
        mapped = protocols.cloudevent_envelope(request.headers, body, tenant, delivery)
        if mapped.refusal is not None:
            return await _refused_protocol(svc, tenant, text, mapped.refusal)
        text = mapped.text
    parsed, whole = _parse(text, svc.max_body)
    if whole is not None:  # not even split into events: one refusal for the post
        return await _refused_post(svc, tenant, text, whole)
    parsed, text = protocols.with_delivery_key(parsed, text, delivery)
    batch = isinstance(parsed, list)
    items = parsed if batch else [parsed]
    raws = [json.dumps(e, ensure_ascii=False) for e in parsed] if batch else [text]
    if batch and not 1 <= len(raws) <= svc.max_batch:
        return _problem(413 if raws else 422, "batch_size",
                        f"a batch holds 1 to {svc.max_batch} events")
    for item in items:
        named = item.get("tenant_id") if isinstance(item, dict) else None
        if isinstance(named, str) and named != tenant:
            return _problem(403, "cross_tenant", "an event names another tenant than the signer")
    wait = svc.limiter.take(tenant, len(raws), svc.clock())
    if wait:
        retry = "3600" if math.isinf(wait) else str(max(1, math.ceil(wait)))
        return _problem(429, "rate_limited", "the tenant is over its intake rate",
                        **{"Retry-After": retry})
    secret = svc.tenant_secrets[tenant]
    answers = []
    for i, (item, raw) in enumerate(zip(items, raws, strict=True)):
        bad = edge_text.check_value(item, f"$[{i}]" if batch else "$")
        answers.append(await (_refuse(svc, tenant, raw, bad) if bad else
                              _one(svc, tenant, secret, raw)))
    if batch:
        return JSONResponse(BatchAnswer(results=answers).model_dump(mode="json"))
    return JSONResponse(answers[0].model_dump(mode="json"), status_code=answers[0].http_status)


def _parse(text: str, limit: int) -> tuple[Any, edge_text.Violation | None]:
    """The body parsed safely; a violation only when it cannot be split into events (text that
    is simply not JSON goes on as one malformed event, quarantined by the workflow)."""
    if "\x00" in text:
        return None, edge_text.Violation("$", "nul")
    parsed, violation = edge_text.parse_json(text, max_chars=limit)
    if violation is not None and violation.rule == "not_json":
        return None, None
    return parsed, violation


async def _refused_post(svc: Services, tenant: str, text: str,
                        violation: edge_text.Violation) -> JSONResponse:
    answer = await _refuse(svc, tenant, text, violation)
    return JSONResponse(answer.model_dump(mode="json"), status_code=answer.http_status)


async def _refused_protocol(svc: Services, tenant: str, text: str,
                            refusal: CeRefusal) -> JSONResponse:
    """A CloudEvent that cannot become an envelope: quarantined at once with the reason,
    without its text, like a refused text (ADR 0032)."""
    wf_id = quarantine_workflow_id(text)
    await PostgresStore(svc.pool).quarantine(
        workflow_id=wf_id, reason_code=refusal.reason_code, detail=refusal.message,
        redacted_payload=None, received_at=datetime.now(UTC), tenant_id=tenant)
    answer = EventAnswer(http_status=422, status="invalid", workflow_id=wf_id,
                         reason_code=refusal.reason_code, message=refusal.message,
                         state="QUARANTINED")
    return JSONResponse(answer.model_dump(mode="json"), status_code=422)


async def _refuse(svc: Services, tenant: str, raw: str,
                  violation: edge_text.Violation) -> EventAnswer:
    """422 naming the field and rule, and the quarantine row (without the text)."""
    refusal = refusal_for(violation)
    wf_id = quarantine_workflow_id(raw)
    await PostgresStore(svc.pool).quarantine(
        workflow_id=wf_id, reason_code=refusal.reason_code, detail=refusal.message,
        redacted_payload=None, received_at=datetime.now(UTC), tenant_id=tenant)
    return EventAnswer(http_status=422, status="invalid", workflow_id=wf_id,
                       reason_code=refusal.reason_code, message=refusal.message,
                       field=violation.field, rule=violation.rule, state="QUARANTINED")


async def _one(svc: Services, tenant: str, secret: str, raw: str) -> EventAnswer:
    received_at = datetime.now(UTC)
    checked = precheck(raw, secret, received_at)
    wf_id = intake.workflow_id_for(checked.raw)
    status = "invalid" if checked.reason_code else "accepted"
    found = await svc.outbox.record(
        workflow_id=wf_id, conflict_workflow_id=quarantine_workflow_id(checked.raw),
        tenant_id=tenant, fingerprint=payload_fingerprint(checked.raw), status=status,
        reason_code=checked.reason_code, raw=checked.raw, received_at=received_at)
    if found.kind == "conflict":
        return EventAnswer(http_status=409, status="conflict", workflow_id=wf_id,
                           reason_code="idempotency_conflict", state=found.state,
                           message="this idempotency_key was already used with another payload")
    if found.kind == "new":
        if checked.reason_code:
            return EventAnswer(http_status=422, status="invalid", workflow_id=wf_id,
                               reason_code=checked.reason_code, message=checked.message,
                               state="QUARANTINED")
        return EventAnswer(http_status=202, status="accepted", workflow_id=wf_id,
                           state="RECEIVED")
    if found.status == "invalid" or found.state in _INVALID_STATES:
        return EventAnswer(http_status=422, status="invalid", workflow_id=wf_id,
                           reason_code=found.reason_code, state=found.state,
                           message="this event was refused before; fix it and use a new key")
    return EventAnswer(http_status=200, status="duplicate", workflow_id=wf_id,
                       reason_code="duplicate", state=found.state or "RECEIVED",
                       previous=found.outcome)
