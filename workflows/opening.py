"""The first step of a ProcessEventWorkflow run: validation and the idempotency gate (one
intake activity), the search attributes it makes known, and the intake's terminal states
(quarantined, duplicate, dead-lettered, superseded). The producer's ``intake`` update answers
from what this step keeps (``workflows/intake.py``). Deterministic like any workflow code.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING

from temporalio import workflow
from temporalio.common import SearchAttributeUpdate

with workflow.unsafe.imports_passed_through():
    from activities.intake import IntakeActivities
    from contracts import EventState, FinalOutcome, IntakeRequest, IntakeResult
    from policies.keys import payload_fingerprint
    from workflows import timeouts as t
    from workflows.ledger import COALESCED_SEARCH_ATTRIBUTES
    from workflows.search_attributes import EVENT_TYPE, TENANT
    from workflows.shape import taken

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
    found: list[SearchAttributeUpdate] = []
    if intake.event is not None:
        wf._review.requester = intake.event.source
        found = [TENANT.value_set(intake.event.tenant_id),
                 EVENT_TYPE.value_set(intake.event.event_type)]
        if not wf._coalesce:
            workflow.upsert_search_attributes(found)
            found = []
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
