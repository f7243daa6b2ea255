"""The contracts that cross a Temporal boundary: one frozen model in and one out per step.

Pure pydantic, imported by workflows, so nothing here may do I/O or read a clock. Every model
forbids unknown fields; adding a field with a default is the backwards-compatible way to grow.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, StringConstraints

from policies.keys import EVENT_TYPE_PATTERN, ID_PATTERN
from policies.matrix import PolicySnapshot

Identifier = Annotated[str, StringConstraints(pattern=ID_PATTERN)]
EventType = Annotated[str, StringConstraints(pattern=EVENT_TYPE_PATTERN)]


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class EventState(StrEnum):
    RECEIVED = "RECEIVED"
    VALIDATED = "VALIDATED"
    CONTEXT_READY = "CONTEXT_READY"
    DRAFTED = "DRAFTED"
    AWAITING_REVIEW = "AWAITING_REVIEW"
    #: The draft waits at the policy gate (the tenant's review backlog is over its limit).
    HELD_AT_GATE = "HELD_AT_GATE"
    APPROVED = "APPROVED"
    EXECUTING = "EXECUTING"
    SUCCEEDED = "SUCCEEDED"
    QUARANTINED = "QUARANTINED"
    DUPLICATE = "DUPLICATE"
    SUPERSEDED = "SUPERSEDED"
    STOPPED = "STOPPED"
    FAILED_VALIDATION = "FAILED_VALIDATION"
    REJECTED = "REJECTED"
    EXPIRED = "EXPIRED"
    UNKNOWN_WRITE = "UNKNOWN_WRITE"
    RECONCILING = "RECONCILING"
    DEAD_LETTERED = "DEAD_LETTERED"


TERMINAL_STATES: frozenset[EventState] = frozenset(
    {
        EventState.SUCCEEDED,
        EventState.QUARANTINED,
        EventState.DUPLICATE,
        EventState.SUPERSEDED,
        EventState.STOPPED,
        EventState.FAILED_VALIDATION,
        EventState.REJECTED,
        EventState.EXPIRED,
        EventState.DEAD_LETTERED,
    }
)


# --- step 1-2: intake -------------------------------------------------------------------------


class EventEnvelope(Frozen):
    """What a producer sends. ``signature`` is HMAC-SHA256 over the canonical envelope without
    ``signature`` and ``received_at`` (see ``policies.signing``); ``received_at`` is stamped by
    the intake, whatever the producer put there."""

    event_id: Identifier
    event_type: EventType
    source: Annotated[str, StringConstraints(min_length=1, max_length=128)]
    tenant_id: Identifier
    entity_id: Identifier
    schema_version: Annotated[int, Field(ge=1, le=1000)]
    occurred_at: AwareDatetime
    received_at: AwareDatetime | None = None
    correlation_id: Identifier
    idempotency_key: Identifier
    payload: dict[str, Any]
    signature: Annotated[str, StringConstraints(min_length=1, max_length=200)]


class IntakeRequest(Frozen):
    """Workflow input: the event exactly as the producer sent it, parsed only inside an activity,
    so that even unparseable input is quarantined by the same path."""

    raw: Annotated[str, StringConstraints(max_length=65536)]
    received_at: datetime


class EventRef(Frozen):
    """The small handle later steps pass around instead of the whole event."""

    workflow_id: str
    tenant_id: str
    event_id: str
    event_type: str
    entity_id: str
    correlation_id: str
    schema_version: int


class IntakeResult(Frozen):
    """Output of ``validate_event``: the idempotency gate's answer as well as validation's."""

    status: Literal["accepted", "duplicate", "quarantined", "dead_lettered", "superseded"]
    event: EventEnvelope | None = None
    ref: EventRef | None = None
    policy: PolicySnapshot | None = None
    reason_code: str | None = None
    message: str | None = None
    previous: FinalOutcome | None = None


class IntakeAck(Frozen):
    """What a producer is told at once (the ``intake`` update's result)."""

    status: Literal["accepted", "duplicate", "invalid"]
    workflow_id: str
    state: EventState
    reason_code: str | None = None
    message: str | None = None
    previous: FinalOutcome | None = None


# --- step 3: context --------------------------------------------------------------------------


class CustomerRecord(Frozen):
    """The minimal record a context source returns (adapters.base.ContextSource)."""

    tenant_id: str
    customer_id: str
    first_name: str
    locale: str = "en"
    pet_name: str | None = None
    consent_messaging: bool
    updated_at: AwareDatetime


class ContextRequest(Frozen):
    ref: EventRef
    payload: dict[str, Any]
    policy: PolicySnapshot
    seq: int


class ContextResult(Frozen):
    status: Literal["ready", "stopped"]
    fields: dict[str, str] = Field(default_factory=dict)
    updated_at: datetime | None = None
    reason_code: str | None = None


# --- step 4: draft ----------------------------------------------------------------------------


class Draft(Frozen):
    """What the model must return: a proposal, never an action. Handed to the model as the JSON
    schema of the structured output. ``confidence`` is recorded and changes no state."""

    message: Annotated[str, StringConstraints(max_length=1000)]
    source_refs: list[str] = Field(default_factory=list, max_length=20)
    unknowns: list[str] = Field(default_factory=list, max_length=20)
    reason: Annotated[str, StringConstraints(max_length=500)] = ""
    confidence: Annotated[float, Field(ge=0.0, le=1.0)] | None = None


class DraftRequest(Frozen):
    """``context`` holds the only facts the model may use, keyed by source ref
    (``crm.first_name``, ``event.due_at``); a draft citing any other ref is invalid."""

    ref: EventRef
    context: dict[str, str]
    policy_version: str
    prompt_version: str
    version: int = 1
    reviewer_note: str | None = None


class DraftResult(Frozen):
    """``unreadable``: the last allowed attempt still could not be parsed; the record goes to a
    reviewer with ``raw_excerpt`` (redacted). ``failed_validation``: readable but refused by the
    validator (``findings`` say why)."""

    status: Literal["drafted", "failed_validation", "unreadable"]
    version: int
    draft: Draft | None = None
    provider: str
    model: str
    prompt_version: str
    findings: list[str] = Field(default_factory=list)
    raw_excerpt: str | None = None


# --- step 5: policy gate and review -----------------------------------------------------------


class ReviewDecision(Frozen):
    """A reviewer's decision, sent as the ``review`` update or the approve/reject signals."""

    request_id: str
    decision: Literal["approve", "reject", "request_info"]
    reviewer: Annotated[str, StringConstraints(min_length=1, max_length=128)]
    role: Annotated[str, StringConstraints(min_length=1, max_length=64)] = "reviewer"
    reason: Annotated[str, StringConstraints(min_length=1, max_length=1000)]
    draft_version: int
    #: The reviewer's tenant as the sender knows it (the CLI's ``--tenant``); None when the
    #: channel carries none. A decision for another tenant's event is refused ``cross_tenant``.
    tenant_id: Identifier | None = None


class ReviewAck(Frozen):
    accepted: bool
    state: EventState
    message: str
    #: Why a decision was refused (``policies.gate.AuthorizationReason``); None when accepted.
    reason_code: str | None = None


class ReviewTicket(Frozen):
    """What the ``review_ticket`` query shows a reviewer: enough to decide, nothing secret."""

    workflow_id: str
    state: EventState
    request_id: str | None
    draft_version: int | None
    draft: Draft | None
    context_fields: list[str]
    required_roles: list[str]
    risk: str | None
    policy_version: str | None
    review_deadline: datetime | None
    #: When the review's SLA passes (then the fallback owner is told).
    review_due_at: datetime | None = None


class Transition(Frozen):
    seq: int
    from_state: EventState | None
    to_state: EventState
    actor: str
    reason: str


class StepRecord(Frozen):
    """Input of the store-only ``record_step`` local activity: state changes plus the step's own
    write (draft, decision, outcome), all in one round trip. ``seq`` numbers come from the
    workflow, so a retried write is a no-op."""

    ref: EventRef
    transitions: list[Transition]
    reason_code: str | None = None
    policy_version: str | None = None
    draft: DraftResult | None = None
    decision: ReviewDecision | None = None
    outcome: FinalOutcome | None = None


class RefusedDecision(Frozen):
    """A decision the workflow ignored (wrong role, stale version, too late...), kept for audit."""

    ref: EventRef
    number: int
    decision: ReviewDecision
    refusal_code: str
    policy_version: str | None = None


class GateCountsRequest(Frozen):
    """What the policy gate needs counted for one draft (``count_gate_inputs``)."""

    ref: EventRef
    adapter: str
    action: str
    #: The workflow's clock: review due times were written on it, so overdue is judged on it.
    as_of: datetime


class GateCounts(Frozen):
    """``sends_today``: this action's receipts for this customer in the last 24 h, PENDING and
    UNKNOWN included (they may have been delivered). ``overdue_reviews``: the tenant's events
    waiting for review past their SLA."""

    sends_today: int
    overdue_reviews: int


class ReviewOpening(Frozen):
    """Input of ``open_review``: the transitions into AWAITING_REVIEW (and the draft) plus the
    time the review's SLA passes, written in one statement."""

    step: StepRecord
    review_due_at: datetime


class EscalationNotice(Frozen):
    """The SLA of an open review passed: tell the fallback owner (``notify_fallback_owner``).
    References only; the owner reads the record with ``tollgate review show``."""

    ref: EventRef
    request_id: str
    draft_version: int
    fallback_owner: str
    review_due_at: datetime
    review_deadline: datetime
    policy_version: str


# --- step 6: action ---------------------------------------------------------------------------


class ReceiptStatus(StrEnum):
    PENDING = "PENDING"
    SUCCEEDED = "SUCCEEDED"
    REJECTED = "REJECTED"
    UNKNOWN = "UNKNOWN"


class ActionRequest(Frozen):
    """One business action. ``action_key`` derives from business data only
    (``policies.keys.action_key``), never from a run id."""

    ref: EventRef
    adapter: str
    action: str
    action_key: str
    channel: str
    body: Annotated[str, StringConstraints(min_length=1, max_length=1000)]
    policy_version: str
    approved_by: str


class Receipt(Frozen):
    action_key: str
    tenant_id: str
    event_id: str
    adapter: str
    action: str
    request_fingerprint: str
    status: ReceiptStatus
    external_id: str | None = None
    error_class: str | None = None
    error_code: str | None = None
    attempts: int = 0
    policy_version: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None


class ExecuteRequest(Frozen):
    action: ActionRequest
    draft_version: int
    seq: int


class ExecuteResult(Frozen):
    """``held``: a kill switch covers this adapter/tenant; nothing was sent, try again later."""

    status: Literal["succeeded", "rejected", "unknown", "stopped", "held"]
    receipt: Receipt | None = None
    reason_code: str | None = None


class ReconcileRequest(Frozen):
    ref: EventRef
    action: ActionRequest
    lookup_window: timedelta = timedelta(minutes=10)


class ReconcileResult(Frozen):
    status: Literal["succeeded", "resent", "stopped", "rejected"]
    receipt: Receipt | None = None
    attempts: int = 0
    reason_code: str | None = None


# --- the end ----------------------------------------------------------------------------------


class FinalOutcome(Frozen):
    workflow_id: str
    tenant_id: str | None = None
    event_id: str | None = None
    state: EventState
    reason_code: str | None = None
    receipt: Receipt | None = None
    policy_version: str | None = None
    payload_fingerprint: str | None = None


IntakeResult.model_rebuild()
IntakeAck.model_rebuild()
StepRecord.model_rebuild()
ReviewOpening.model_rebuild()
