"""The human review of one ProcessEventWorkflow run: its state, its handlers' logic, its wait.

``ProcessEventWorkflow`` owns one ``ReviewDesk`` and keeps the query, update and signal handlers
registered on itself (Temporal finds them on the workflow class), each delegating here. The desk
never changes the event's state itself: the workflow passes its state in and its ``_record``
(the step writer) for the transitions a review makes. Deterministic like any workflow code.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from activities.review import ReviewActivities
    from activities.steps import StepActivities
    from contracts import (
        DraftResult,
        EscalationNotice,
        EventRef,
        EventState,
        RefusedDecision,
        ReviewAck,
        ReviewDecision,
        ReviewTicket,
    )
    from contracts.policy import PolicySnapshot
    from contracts.search_attributes import review_ticket_value
    from policies.evidence import cited_evidence, review_route
    from policies.gate import Authorization, GateDecision, authorize_decision
    from workflows import timeouts as t
    from workflows.ledger import COALESCED_SEARCH_ATTRIBUTES
    from workflows.search_attributes import REVIEW_DUE, REVIEW_TICKET
    from workflows.shape import new_shape, taken


#: workflow.patched() id: separation of duties compares ``identity_key``s (issue 25), so a
#: look-alike hyphen no longer lets a requester approve; runs that decided before compare as then.
IDENTITY_KEY_SOD = "identity-key-separation-of-duties"
#: workflow.patched() id: a decision by signal decides nothing (no validator ran on it, so no
#: identity was verified: ADR 0026); it is recorded as refused ``unverified_signal``.
SIGNALS_UNVERIFIED = "signal-decisions-refused"


#: Why a review opens, as its transitions say.
OPENING_REASON = "draft validated, waiting for an authorised reviewer"


@dataclass(frozen=True)
class Opened:
    """A review the gate's local activity already opened (``workflows.fused``): its
    transitions' last state, its start and its SLA."""

    state: EventState
    start: datetime
    due: datetime


class ReviewDesk:
    """One open review at a time: a ``request_id`` per review, a decision checked against it."""

    def __init__(self) -> None:
        self.request_id: str | None = None
        self.decision: ReviewDecision | None = None
        self.refusals = 0
        self.info_rounds = 0
        #: Every request-info question of this review, oldest first: each new version answers
        #: all of them (``DraftRequest.reviewer_notes``), not only the latest.
        self.asked: tuple[str, ...] = ()
        #: The event's source: it may not approve its own request (separation of duties).
        self.requester: str | None = None
        self.deadline: datetime | None = None
        self.due: datetime | None = None
        # What the ticket shows besides the draft; none of it changes what the run does.
        self.fields: dict[str, str] = {}
        self.fetched_at: datetime | None = None
        self.source_updated_at: datetime | None = None
        self.escalated = False
        self.shown: DraftResult | None = None
        self.previous: DraftResult | None = None
        self.answering: str | None = None

    def ask(self, question: str) -> None:
        """A request-info decision was taken: one round used, its question kept for the drafts."""
        self.info_rounds += 1
        self.asked = (*self.asked, question)

    def context_read(self, fields: dict[str, str], fetched_at: datetime | None = None,
                     source_updated_at: datetime | None = None) -> None:
        """The facts the drafts may cite, and when the source record was read (for evidence)."""
        self.fields = fields
        if fetched_at is not None:
            self.fetched_at, self.source_updated_at = fetched_at, source_updated_at

    def ticket(self, state: EventState, draft: DraftResult | None, gate: GateDecision | None,
               policy: PolicySnapshot | None) -> ReviewTicket:
        rule = policy.rule if policy else None
        cited = draft.draft.source_refs if draft and draft.draft else []
        previous = self.previous if draft and self.shown is draft else None
        return ReviewTicket(
            workflow_id=workflow.info().workflow_id, state=state,
            request_id=self.request_id, draft_version=draft.version if draft else None,
            draft=draft.draft if draft else None,
            context_fields=sorted(draft.draft.source_refs) if draft and draft.draft else [],
            required_roles=list(gate.required_roles) if gate else [],
            risk=gate.risk if gate else None,
            policy_version=policy.version if policy else None,
            review_deadline=self.deadline,
            review_due_at=self.due,
            flags=list(draft.flags) if draft else [],
            evidence=cited_evidence(
                cited, self.fields, fetched_at=self.fetched_at,
                source_updated_at=self.source_updated_at,
                max_age=rule.max_context_age if rule else None, event_source=self.requester),
            route=review_route(rule, reason_code=gate.reason_code if gate else None,
                               sends_today=gate.sends_today if gate else None,
                               info_rounds=self.info_rounds, escalated=self.escalated)
            if rule else None,
            previous_version=previous.version if previous else None,
            previous_message=previous.draft.message if previous and previous.draft else None,
            answering=self.answering if previous else None,
        )

    def authorize(self, decision: ReviewDecision, *, state: EventState, ref: EventRef,
                  policy: PolicySnapshot, draft: DraftResult | None,
                  fold: bool) -> Authorization:
        """The policy's verdict on ``decision`` for the review now open (pure: the handler and
        the update validator, ``workflows.decision_guard``, ask the same question)."""
        return authorize_decision(
            policy, decision, tenant_id=ref.tenant_id, decision_tenant_id=decision.tenant_id,
            requester=self.requester, draft_author=draft.provider if draft else None,
            expected_request_id=self.request_id,
            current_draft_version=draft.version if draft else None,
            review_open=state == EventState.AWAITING_REVIEW and self.decision is None,
            info_rounds=self.info_rounds, fold_identities=fold,
        )

    async def consider(self, decision: ReviewDecision, *, state: EventState,
                       ref: EventRef | None, policy: PolicySnapshot | None,
                       draft: DraftResult | None, by_signal: bool = False) -> ReviewAck:
        """Accept a decision only from an authorised reviewer for the review now open; record
        every refusal (a local activity) so an operator can see who tried what."""
        if ref is None or policy is None:
            return ReviewAck(accepted=False, state=state,
                             message=f"not waiting for review (state {state})")
        if by_signal and taken(SIGNALS_UNVERIFIED):
            verdict = Authorization(
                ok=False, reason_code="unverified_signal", policy_version=policy.version,
                message="a decision by signal carries no verified identity: decide through "
                        "`tollgate review` or the review API")
        else:
            verdict = self.authorize(decision, state=state, ref=ref, policy=policy,
                                     draft=draft, fold=taken(IDENTITY_KEY_SOD))
        if not verdict.ok:
            self.refusals += 1
            await workflow.execute_local_activity_method(
                StepActivities.record_refusal,
                RefusedDecision(ref=ref, number=self.refusals, decision=decision,
                                refusal_code=verdict.reason_code or "refused",
                                policy_version=policy.version),
                start_to_close_timeout=t.STORE_TIMEOUT, retry_policy=t.STORE_RETRY,
            )
            workflow.logger.info("review decision refused: %s", verdict.reason_code)
            return ReviewAck(accepted=False, state=state, message=verdict.message,
                             reason_code=verdict.reason_code)
        self.decision = decision
        return ReviewAck(accepted=True, state=state, message=f"{decision.decision} accepted")

    async def await_decision(self, ref: EventRef, gate: GateDecision, draft: DraftResult, *,
                             state: EventState, record: Callable[..., Awaitable[None]],
                             opened: Opened | None = None,
                             entered: Callable[..., None] | None = None,
                             ) -> ReviewDecision | None:
        """Open a review and wait for a valid decision; at the SLA tell the fallback owner and
        keep waiting, at the deadline expire (None). A timeout never approves. ``opened``: the
        gate's local activity already wrote the opening (a new-shape run); only the state is
        entered then, through ``entered``."""
        self.request_id = str(workflow.uuid4())
        if self.shown is not None and self.shown is not draft:
            # A new version after request-info: the ticket shows what changed and why.
            self.previous = self.shown
            self.answering = self.decision.reason if self.decision else None
        self.shown, self.escalated = draft, False
        self.decision = None
        start = opened.start if opened else workflow.now()
        self.due = opened.due if opened else start + gate.review_sla
        self.deadline = start + gate.review_deadline
        if not taken(COALESCED_SEARCH_ATTRIBUTES):  # else set with the state
            workflow.upsert_search_attributes([REVIEW_DUE.value_set(self.due)])
        opening = ([EventState.AWAITING_REVIEW] if state == EventState.HELD_AT_GATE
                   else [EventState.DRAFTED, EventState.AWAITING_REVIEW])
        # The ticket a decision names goes with AWAITING_REVIEW: a reviewer listing the queue
        # decides without a query first (new-shape runs; the upsert leaving the queue unsets it).
        ticket = ([REVIEW_TICKET.value_set(review_ticket_value(self.request_id, draft.version))]
                  if new_shape() else [])
        if opened is not None and entered is not None:
            entered(opened.state, review_due_at=self.due, shown_with=ticket)
        else:
            await record(opening, OPENING_REASON, draft=draft, review_due_at=self.due,
                         shown_with=ticket)
        if not await self._decided_within(gate.review_sla):
            notified = await self._notify_fallback_owner(ref, gate, draft)
            self.escalated = True
            await record([EventState.AWAITING_REVIEW],
                         f"review SLA passed, escalated to {gate.fallback_owner}"
                         + ("" if notified else " (the notice could not be delivered)"))
            remaining = gate.review_deadline - (workflow.now() - start)
            try:
                await workflow.wait_condition(lambda: self.decision is not None,
                                              timeout=max(remaining, timedelta(seconds=1)))
            except TimeoutError:
                return None
        return self.decision

    async def _decided_within(self, sla: timedelta) -> bool:
        """Wait for a decision until the SLA; False when the SLA passed first.

        In a new-shape run the SLA's timer is left to lapse when an approval or a rejection
        comes first, instead of being cancelled: the cancel is a history event, while a timer
        still pending when the run ends writes nothing (a run still open when it fires, a send
        held past the SLA, takes one idle wake-up). A request-info cancels it, since the run
        goes on to another review. Older runs cancelled it, and replay keeps them so."""
        if not new_shape():
            try:
                await workflow.wait_condition(lambda: self.decision is not None, timeout=sla)
            except TimeoutError:
                return False
            return True
        passed = False

        def lapse() -> None:
            nonlocal passed
            passed = True

        timer = asyncio.get_running_loop().call_later(sla.total_seconds(), lapse)
        await workflow.wait_condition(lambda: self.decision is not None or passed)
        if self.decision is None:
            return False
        if self.decision.decision == "request_info":
            timer.cancel()
        return True

    async def _notify_fallback_owner(
        self, ref: EventRef, gate: GateDecision, draft: DraftResult
    ) -> bool:
        assert self.request_id and self.due and self.deadline
        notice = EscalationNotice(
            ref=ref, request_id=self.request_id, draft_version=draft.version,
            fallback_owner=gate.fallback_owner, review_due_at=self.due,
            review_deadline=self.deadline, policy_version=gate.policy_version,
        )
        try:
            await workflow.execute_activity_method(
                ReviewActivities.notify_fallback_owner, notice,
                start_to_close_timeout=t.NOTIFY_TIMEOUT, retry_policy=t.NOTIFY_RETRY,
            )
        except ActivityError as err:
            # The review keeps waiting either way; a lost notice must not expire it early.
            workflow.logger.warning("escalation notice failed: %s", err.cause)
            return False
        return True
