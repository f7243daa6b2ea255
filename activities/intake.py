"""Steps 1-2: validate an event and pass it through the durable idempotency gate."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

import structlog
from pydantic import ValidationError
from temporalio import activity

from adapters.ports.stores.controls import DeadLetterQueue
from adapters.ports.stores.events import EventGate
from contracts import EventEnvelope, EventRef, FinalOutcome, IntakeRequest, IntakeResult
from contracts.errors import ErrorClass
from contracts.events import MAX_EVENT_CHARS, DuplicateSeen
from policies import edge_text, signing
from policies.keys import fingerprint
from policies.matrix import PolicyMatrix
from policies.redaction import personal_data_kind, redact
from policies.schemas import check_payload, describe_validation_error

log = structlog.get_logger("tollgate.intake")

#: How far in the future an event's ``occurred_at`` may be, against the intake clock.
MAX_CLOCK_SKEW = timedelta(minutes=5)
DRIFT_OWNER = "integrations-oncall"
_KIND = {"email": "an e-mail address", "phone": "a phone number"}


class IntakeActivities:
    def __init__(
        self,
        store: EventGate,
        ops: DeadLetterQueue,
        tenant_secrets: Mapping[str, str],
        matrix: PolicyMatrix,
    ) -> None:
        self.store = store
        self.ops = ops
        self.tenant_secrets = tenant_secrets
        self.matrix = matrix

    @activity.defn
    async def count_duplicate(self, seen: DuplicateSeen) -> None:
        """Count a delivery the running workflow's intake update answered "duplicate"."""
        await self.store.count_duplicate(tenant_id=seen.tenant_id, channel="update",
                                         stage=seen.stage)

    @activity.defn
    async def validate_event(self, request: IntakeRequest) -> IntakeResult:
        info = activity.info()
        assert info.workflow_id is not None and info.workflow_run_id is not None
        result = await self._validate(info.workflow_id, info.workflow_run_id, request)
        log.info(
            "validate_event", workflow_id=info.workflow_id, status=result.status,
            reason_code=result.reason_code, attempt=info.attempt,
        )
        return result

    async def _validate(self, workflow_id: str, run_id: str, req: IntakeRequest) -> IntakeResult:
        if req.refusal is not None:  # refused at the edge; its text never travelled
            return await self._quarantine(workflow_id, req, None, req.refusal.reason_code,
                                          req.refusal.message)
        if req.oversize is not None:
            return await self._quarantine(
                workflow_id, req, None, "too_large",
                f"the event is {req.oversize} characters; the limit is {MAX_EVENT_CHARS}")
        try:
            data, twice = edge_text.loads_keeping_keys(req.raw)
        except ValueError:
            return await self._quarantine(workflow_id, req, None, "malformed_json",
                                          f"the event {edge_text.why_not_json(req.raw)}")
        if not isinstance(data, dict):
            return await self._quarantine(workflow_id, req, None, "malformed_json",
                                          "the event must be a JSON object")
        if twice is not None:  # every edge refuses it too; this is the authority
            return await self._quarantine(workflow_id, req, None, twice.rule, twice.message)
        key = data.get("idempotency_key")
        kind = personal_data_kind(key) if isinstance(key, str) else None
        if kind is not None:
            # Checked before anything else: the key would become a workflow id, kept in clear.
            return await self._quarantine(
                workflow_id, req, None, "personal_data_in_key",
                f"idempotency_key looks like {_KIND[kind]}; use an id that names no person "
                "(e.g. a record or order id)")
        try:
            event = EventEnvelope.model_validate(data)
        except ValidationError as exc:
            return await self._quarantine(workflow_id, req, data, "bad_envelope",
                                          describe_validation_error(exc))
        secret = self.tenant_secrets.get(event.tenant_id)
        if secret is None:
            return await self._quarantine(workflow_id, req, data, "unknown_tenant",
                                          "tenant_id is not a known tenant")
        if not signing.verify(data, secret):
            log.warning("security_incident", kind="bad_signature", tenant_id=event.tenant_id,
                        error_class=ErrorClass.SECURITY_INCIDENT.value)
            return await self._quarantine(workflow_id, req, data, "bad_signature",
                                          "signature does not match the tenant's key")
        if event.occurred_at > req.received_at + MAX_CLOCK_SKEW:
            return await self._quarantine(workflow_id, req, data, "clock_skew",
                                          "occurred_at is in the future beyond the allowed skew")
        verdict = check_payload(event.event_type, event.schema_version, event.payload)
        if verdict.status in ("unknown", "invalid"):
            code = "unknown_schema" if verdict.status == "unknown" else "bad_payload"
            return await self._quarantine(workflow_id, req, data, code, verdict.detail)
        policy = self.matrix.rule_for(event.tenant_id, event.event_type)
        if policy is None:
            return await self._quarantine(workflow_id, req, data, "no_policy",
                                          "no policy rule covers this tenant and event type")
        ref = _ref(workflow_id, event)
        if verdict.status == "retired":
            await self.ops.dead_letter(
                workflow_id=workflow_id, error_class=ErrorClass.DEAD_LETTER.value,
                error_code="schema_drift", state="DEAD_LETTERED", owner=DRIFT_OWNER,
                replay_plan=verdict.detail, redacted_payload=redact(data),
                tenant_id=event.tenant_id, event_id=event.event_id,
                correlation_id=event.correlation_id,
            )
            return IntakeResult(status="dead_lettered", event=event, ref=ref,
                                reason_code="schema_drift", message=verdict.detail)
        stamped = event.model_copy(update={"received_at": req.received_at})
        admission = await self.store.admit_event(
            workflow_id=workflow_id, run_id=run_id, event=stamped,
            fingerprint=fingerprint(event.payload), received_at=req.received_at,
            supersede=policy.rule.supersede is not False,
        )
        previous = FinalOutcome.model_validate(admission.outcome) if admission.outcome else None
        if admission.status == "conflict":
            return await self._quarantine(
                workflow_id, req, data, "idempotency_conflict",
                "this idempotency_key was already used with a different payload")
        if admission.status == "existing":
            return IntakeResult(status="duplicate", event=stamped, ref=ref, previous=previous,
                                reason_code="duplicate", message=f"already {admission.state}")
        if admission.status == "superseded":
            return IntakeResult(status="superseded", event=stamped, ref=ref,
                                reason_code="newer_event_exists",
                                message="a newer event for this entity was already admitted")
        return IntakeResult(status="accepted", event=stamped, ref=ref, policy=policy)

    async def _quarantine(
        self, workflow_id: str, req: IntakeRequest, data: dict[str, Any] | None, code: str,
        detail: str,
    ) -> IntakeResult:
        tenant = data.get("tenant_id") if data else None
        event_id = data.get("event_id") if data else None
        await self.store.quarantine(
            workflow_id=workflow_id, reason_code=code, detail=detail,
            redacted_payload=redact(data) if data is not None else None,
            received_at=req.received_at,
            tenant_id=tenant if isinstance(tenant, str) else None,
            event_id=event_id if isinstance(event_id, str) else None,
        )
        return IntakeResult(status="quarantined", reason_code=code, message=detail)


def _ref(workflow_id: str, event: EventEnvelope) -> EventRef:
    return EventRef(
        workflow_id=workflow_id, tenant_id=event.tenant_id, event_id=event.event_id,
        event_type=event.event_type, entity_id=event.entity_id,
        correlation_id=event.correlation_id, schema_version=event.schema_version,
    )
