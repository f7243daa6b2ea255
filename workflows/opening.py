"""The first steps of a ProcessEventWorkflow run: validation and the idempotency gate (one
intake activity), the search attributes it makes known, the intake's terminal states
(quarantined, duplicate, dead-lettered, superseded), and the read of the customer record. The
producer's ``intake`` update answers from what this step keeps (``workflows/intake.py``).
Deterministic like any workflow code.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING

from temporalio import workflow
from temporalio.common import SearchAttributeUpdate

with workflow.unsafe.imports_passed_through():
    from activities.context import ContextActivities
    from activities.intake import IntakeActivities
    from contracts import (
        ContextRequest,
        ContextResult,
        EventState,
        FinalOutcome,
        IntakeRequest,
        IntakeResult,
    )
    from policies.keys import payload_fingerprint
    from workflows import timeouts as t
    from workflows.ledger import COALESCED_SEARCH_ATTRIBUTES
    from workflows.search_attributes import EVENT_TYPE, TENANT
    from workflows.shape import new_shape, taken

if TYPE_CHECKING:
    from workflows.sending import SendingLedger

#: workflow.patched() ids, one per change of the command sequence; never reuse or remove one
#: while histories recorded before it may still be running (tests/replay keeps both paths).
INTAKE_AS_LOCAL_ACTIVITY = "intake-as-local-activity"

#: The intake answers that end the event at once.
_TERMINAL = MappingProxyType({
    "quarantined": EventState.QUARANTINED, "duplicate": EventState.DUPLICATE,
    "dead_lettered": EventState.DEAD_LETTERED, "superseded": EventState.SUPERSEDED,
})


async def open_event(wf: SendingLedger, request: IntakeRequest) -> IntakeResult | FinalOutcome:
    """Validate and gate the event; its outcome when that ends it, else the accepted intake
    (``event``, ``ref`` and ``policy`` set), the run's state VALIDATED."""
    wf._fingerprint = payload_fingerprint(request.raw)
    if taken(INTAKE_AS_LOCAL_ACTIVITY):
        # Store-only and idempotent per run: one workflow task fewer, the producer's
        # acknowledgement about twice as fast (docs/performance.md).
        intake = await workflow.execute_local_activity_method(
            IntakeActivities.validate_event, request,
            start_to_close_timeout=t.STORE_TIMEOUT, retry_policy=t.STORE_RETRY,
        )
    else:
        intake = await workflow.execute_activity_method(
            IntakeActivities.validate_event, request,
            start_to_close_timeout=t.STORE_TIMEOUT, retry_policy=t.STORE_RETRY,
        )
    wf._ref, wf._policy = intake.ref, intake.policy
    # Tenant and type go with the first state shown: one upsert, not two (older runs: two).
    wf._coalesce = taken(COALESCED_SEARCH_ATTRIBUTES)
    found = _found(wf, intake)
    terminal = _TERMINAL.get(intake.status)
    if terminal is not None:
        wf._set_state(terminal, with_=found)
        wf._intake = intake
        previous = intake.previous
        return FinalOutcome(
            workflow_id=workflow.info().workflow_id, state=terminal,
            tenant_id=intake.ref.tenant_id if intake.ref else None,
            event_id=intake.ref.event_id if intake.ref else None,
            reason_code=intake.reason_code, receipt=previous.receipt if previous else None,
            policy_version=previous.policy_version if previous else None,
            payload_fingerprint=wf._fingerprint,
        )
    wf._seq = 2
    wf._set_state(EventState.VALIDATED, with_=found)
    wf._intake = intake
    return intake


def _found(wf: SendingLedger, intake: IntakeResult) -> list[SearchAttributeUpdate]:
    """The tenant and type the first shown state's upsert carries. A new-shape run was started
    with the producer's claim of both (tollgate/intake/visibility.py, from the start event, so
    the same on replay): it upserts only what validation corrects, and unsets a claim for an
    event it did not admit, so the attributes only ever keep validated values."""
    started = workflow.info().typed_search_attributes
    if intake.event is None:
        return ([key.value_unset() for key in (TENANT, EVENT_TYPE) if started.get(key)]
                if new_shape() else [])
    wf._review.requester = intake.event.source
    pairs = ((TENANT, intake.event.tenant_id), (EVENT_TYPE, intake.event.event_type))
    if new_shape():
        return [key.value_set(value) for key, value in pairs if started.get(key) != value]
    found = [key.value_set(value) for key, value in pairs]
    if not wf._coalesce:
        workflow.upsert_search_attributes(found)
        return []
    return found


async def load_context(read: ContextRequest) -> ContextResult:
    """The customer record, consent and freshness checked (raises when the read failed for
    good). A regular activity in every run, new shape too: a workflow task completes only once
    its local activities have, and the producer's acknowledgement goes out with the first task,
    so a local read would make every producer wait for the CRM (ADR 0053: tried, measured, given
    back)."""
    return await workflow.execute_activity_method(
        ContextActivities.load_context, read,
        start_to_close_timeout=t.READ_TIMEOUT, heartbeat_timeout=t.READ_HEARTBEAT,
        retry_policy=t.READ_RETRY,
        summary="read the minimal customer record; check consent and freshness")
