"""Step 5: the policy gate's inputs, reviewer decisions and the state-change records."""

from __future__ import annotations

from datetime import datetime
from types import MappingProxyType
from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from contracts.actions import Receipt, SendClosing
from contracts.base import EventRef, EventState, Frozen, Identifier
from contracts.drafting import Draft, DraftResult, Flag
from contracts.events import FinalOutcome


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
    #: The reviewer's access token, re-checked by the workflow's update validator
    #: (policies/decision_identity.py); the workflow drops it before anything is stored.
    token: str | None = Field(default=None, repr=False, max_length=16384)


class ReviewAck(Frozen):
    accepted: bool
    state: EventState
    message: str
    #: Why a decision was refused (``policies.gate.AuthorizationReason``); None when accepted.
    reason_code: str | None = None


class Evidence(Frozen):
    """One fact a draft cites, as the reviewer sees it: its value and where it came from.

    ``value`` is masked by policy (``policies.evidence``) before it leaves the workflow: contact
    data shows only enough to recognise it, secrets and card numbers never. None: the draft
    cites a fact the context did not hold. ``freshness`` says, in words, how old the source
    record was when it was read against the age the policy allows.
    """

    ref: str
    #: ``crm`` (the context source) or ``event`` (the producer's payload).
    source: str
    #: Who holds the fact: "CRM customer record", "event from crm-scheduler".
    origin: str
    field: str
    value: str | None
    masked: bool = False
    fetched_at: datetime | None = None
    source_updated_at: datetime | None = None
    freshness: str = ""


class ReviewRoute(Frozen):
    """Why the review is here and where it goes next: the policy rule that routed it."""

    #: The rule's action, ``adapter.action`` (``messaging.send_reminder``).
    rule: str
    approver_roles: list[str]
    reason_code: str | None = None
    #: "given at the source when read (checked again before sending)" or "not required".
    consent: str
    sends_today: int | None = None
    daily_limit: int
    sends_left_today: int | None = None
    #: Who is told when the SLA passes, and who holds the review after it.
    fallback_owner: str
    escalated: bool = False
    info_rounds_left: int


class ReviewTicket(Frozen):
    """What the ``review_ticket`` query shows a reviewer: enough to decide, nothing secret.

    Fields after ``flags`` came with issue 28; each has a default, so a ticket from an older
    worker still reads.
    """

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
    #: What the validator wants the reviewer to look at (rule, span, where it came from).
    flags: list[Flag] = []
    #: Each cited fact with its (masked) value and origin.
    evidence: list[Evidence] = []
    route: ReviewRoute | None = None
    #: The version before this one, for the word diff, and the reviewer's request it answers.
    previous_version: int | None = None
    previous_message: str | None = None
    answering: str | None = None


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


#: Where an execute or reconcile result ends the event.
FINAL_STATE = MappingProxyType({
    "succeeded": EventState.SUCCEEDED, "resent": EventState.SUCCEEDED,
    "rejected": EventState.REJECTED, "stopped": EventState.STOPPED,
})


def closing_step(ref: EventRef, closing: SendClosing, *, status: str, reason_code: str | None,
                 policy_version: str, receipt: Receipt | None = None) -> StepRecord | None:
    """The final step a run of the settle-closes shape (ADR 0057) would record after a send
    that ended ``status``, as its ledger writes it (``EventLedger._finish``): EXECUTING to the
    final state under ``closing.seq``, by the workflow, with the outcome (its ``receipt`` left
    to the store's settle, which adds the settled row). None when ``status`` does not end the
    event (an unknown write goes on to the reconciler)."""
    state = FINAL_STATE.get(status)
    if state is None:
        return None
    outcome = FinalOutcome(
        workflow_id=ref.workflow_id, tenant_id=ref.tenant_id, event_id=ref.event_id,
        state=state, reason_code=reason_code, receipt=receipt, policy_version=policy_version,
        payload_fingerprint=closing.payload_fingerprint)
    return StepRecord(
        ref=ref, reason_code=reason_code, policy_version=policy_version, outcome=outcome,
        transitions=[Transition(seq=closing.seq, from_state=EventState.EXECUTING, to_state=state,
                                actor="workflow", reason=reason_code or state.value.lower())])


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


StepRecord.model_rebuild()
ReviewOpening.model_rebuild()
