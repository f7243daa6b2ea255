"""Step 3: load the minimal context from the system of record and check consent and freshness."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import structlog
from temporalio import activity

from adapters.ports.stores.events import ContactBook, StepRecorder
from adapters.ports.targets import ContextSource
from contracts import (
    ContextRequest,
    ContextResult,
    CustomerRecord,
    EventState,
    StepRecord,
    Transition,
)
from policies.gate import check_context

log = structlog.get_logger("tollgate.context")

#: What a rule from before release 2026-12-01 (no ``context_fields``) gets: the record's name,
#: locale and pet, and these event payload fields as ``event.<name>``. Anything else stays out.
EVENT_FIELDS = ("reminder_kind", "due_at", "channel", "notes")
LEGACY_FIELDS = ("crm.first_name", "crm.locale", "crm.pet_name",
                 *(f"event.{name}" for name in EVENT_FIELDS))


class ContextActivities:
    def __init__(self, store: StepRecorder, source: ContextSource, contacts: ContactBook) -> None:
        self.store = store
        self.source = source
        self.contacts = contacts

    @activity.defn
    async def load_context(self, request: ContextRequest) -> ContextResult:
        ref = request.ref
        customer_id = str(request.payload.get("customer_id", ref.entity_id))
        # Read side by side, so the tenant's own contact points (ADR 0039) add no wait to the
        # step. Read here, not by the draft activity: the draft worker holds no database URL
        # (check_draft_environment), so the points travel to it on the draft request.
        record, own = await asyncio.gather(
            self.source.fetch_customer(ref.tenant_id, customer_id),
            self.contacts.tenant_contacts(ref.tenant_id))
        verdict = check_context(request.policy.rule, record, datetime.now(UTC))
        if not verdict.ok or record is None:
            # The workflow records STOPPED itself, together with the final outcome.
            result = ContextResult(status="stopped", reason_code=verdict.reason_code)
        else:
            names = request.policy.rule.context_fields or LEGACY_FIELDS
            result = ContextResult(status="ready", fields=_fields(record, request.payload, names),
                                   updated_at=record.updated_at, tenant_contacts=tuple(own))
            await self.store.record_step(StepRecord(
                ref=ref, policy_version=request.policy.version,
                transitions=[Transition(seq=request.seq, from_state=EventState.VALIDATED,
                                        to_state=EventState.CONTEXT_READY, actor="context",
                                        reason="consent and freshness checked")],
            ))
        log.info("load_context", workflow_id=ref.workflow_id, status=result.status,
                 reason_code=result.reason_code)
        return result


def _fields(
    record: CustomerRecord, payload: dict[str, object], names: tuple[str, ...]
) -> dict[str, str]:
    """Only the facts the policy names for the action (data minimisation): a name the record
    or the payload lacks, or leaves empty, is simply absent, and the drafter lists it as unknown."""
    crm = record.model_dump(include={"first_name", "locale", "pet_name", "notes", "phone",
                                     "email", "address"})
    fields = {}
    for name in names:
        source, _, field = name.partition(".")
        value = crm.get(field) if source == "crm" else payload.get(field)
        if value is not None and str(value).strip():
            fields[name] = str(value)
    return fields
