"""ProcessEventWorkflow: one business event through the seven steps.

Deterministic orchestration only. Every read or write of the outside world is an activity; the
policy gate and reviewer authorisation are pure functions from ``policies``. Each state change
is numbered (``seq``) by this workflow so the store can ignore a retried write.
"""

from __future__ import annotations

from typing import Any, Literal

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from activities.draft import DraftActivities
    from contracts import (
        ContextRequest,
        DraftRequest,
        DraftResult,
        EventRef,
        EventState,
        ExecuteRequest,
        FinalOutcome,
        IntakeAck,
        IntakeRequest,
        IntakeResult,
        ReviewAck,
        ReviewDecision,
        ReviewTicket,
    )
    from contracts.actions import WakeUp
    from contracts.carry import RunCarry
    from contracts.contacts import TenantContact
    from contracts.policy import PolicySnapshot
    from policies.gate import GateDecision, evaluate_gate
    from policies.prompts import PROMPT_VERSION
    from workflows import shape
    from workflows import timeouts as t
    from workflows.decision_guard import guard_decision, validate_decision, without_token
    from workflows.failures import dead_letter_failure
    from workflows.fused import ReviewOpener, approve_and_send
    from workflows.gate import count_gate_inputs, pass_gate
    from workflows.intake import answer, refuse_known_duplicate
    from workflows.opening import load_context, open_event
    from workflows.resume import carry_of, restore
    from workflows.review import ReviewDesk
    from workflows.sending import CARRY_MEMO, SendingLedger
    from workflows.triage import auto_routable, auto_route, is_triage, triage_version

DRAFT_TASK_QUEUE = "tollgate-draft"

@workflow.defn(name="ProcessEvent")
class ProcessEventWorkflow(SendingLedger):
    def __init__(self) -> None:
        super().__init__()
        self._intake: IntakeResult | None = None
        self._intake_calls = 0
        self._gate: GateDecision | None = None
        self._draft: DraftResult | None = None
        self._review = ReviewDesk()
        self._generation = 0
        #: The tenant's own contact points, as the context step read them (ADR 0039).
        self._contacts: tuple[TenantContact, ...] = ()
        #: Whether this run took the one-marker shape: asked first thing in ``run``.
        self._new_shape: bool | None = None
        #: Whether its input asked the quiet shape (no marker at all, ADR 0056).
        self._quiet_shape = False

    # --- producer ------------------------------------------------------------------------

    @workflow.update
    async def intake(self, delivery: IntakeRequest) -> IntakeAck:
        return await answer(self, delivery)

    @intake.validator
    def _known_duplicate(self, delivery: IntakeRequest) -> None:
        refuse_known_duplicate(self, delivery)

    @workflow.query
    def state(self) -> EventState:
        return self._state

    # --- reviewer: handlers registered here, the logic in workflows.review ------------------

    @workflow.query
    def review_ticket(self) -> ReviewTicket:
        return self._review.ticket(self._state, self._draft, self._gate, self._policy)

    @workflow.update
    async def review(self, decision: ReviewDecision) -> ReviewAck:
        return await self._consider(without_token(decision))

    @review.validator
    def _review_identity(self, decision: ReviewDecision) -> None:
        guard_decision(decision)
        validate_decision(self._review, decision, state=self._state, ref=self._ref,
                          policy=self._policy, draft=self._draft)

    # Signals cannot be validated, so they are recorded and refused (``unverified_signal``);
    # runs from before that patch still take them as they did.
    @workflow.signal
    async def approve(self, decision: ReviewDecision) -> None:
        await self._consider(decision.model_copy(update={"decision": "approve"}), True)

    @workflow.signal
    async def reject(self, decision: ReviewDecision) -> None:
        await self._consider(decision.model_copy(update={"decision": "reject"}), True)

    @workflow.signal
    async def request_info(self, decision: ReviewDecision) -> None:
        await self._consider(decision.model_copy(update={"decision": "request_info"}), True)

    async def _consider(self, decision: ReviewDecision, by_signal: bool = False) -> ReviewAck:
        return await self._review.consider(decision, state=self._state, ref=self._ref,
                                           policy=self._policy, draft=self._draft,
                                           by_signal=by_signal)

    # --- whatever held the run released it (tollgate.ops.wake) ----------------------------

    @workflow.signal
    def wake(self, signal: WakeUp) -> None:
        self._hold.wake(signal)

    def _carry(self, at: Literal["gate", "send"], draft: DraftResult, *,
               fields: dict[str, str] | None = None, decision: ReviewDecision | None = None,
               send: ExecuteRequest | None = None, queue: str | None = None) -> RunCarry:
        return carry_of(self, at, draft, fields=fields, decision=decision, send=send,
                        queue=queue)

    # --- the run -------------------------------------------------------------------------

    @workflow.run
    async def run(self, request: IntakeRequest) -> FinalOutcome:
        # First of all: the run's whole shape, from its input or one patch marker
        # (workflows/shape.py).
        shape.begin(request.shape)
        # A run that continues one past its history budget finds the carry in its memo (the
        # input stays the producer's request: one payload, typed, as every start sends it).
        carry = workflow.memo_value(CARRY_MEMO, None, type_hint=RunCarry)
        if carry is None:
            outcome = await self._run(request)
        else:
            outcome = await self._resume(request, carry)
        await workflow.wait_condition(workflow.all_handlers_finished)
        return outcome

    async def _resume(self, request: IntakeRequest, carry: RunCarry) -> FinalOutcome:
        restore(self, carry)
        ref, policy = self._ref, self._policy
        assert ref is not None and policy is not None
        if carry.at == "gate":
            return await self._review_loop(request, ref, policy, carry.context_fields,
                                           first=carry.draft)
        assert carry.send is not None and carry.decision is not None
        return await self._resume_send(request, carry)

    async def _run(self, request: IntakeRequest) -> FinalOutcome:
        intake = await open_event(self, request)
        if isinstance(intake, FinalOutcome):
            return intake
        assert intake.ref is not None and intake.policy is not None and intake.event is not None
        return await self._process(request, intake.ref, intake.policy, intake.event.payload)

    async def _process(
        self, request: IntakeRequest, ref: EventRef, policy: PolicySnapshot,
        payload: dict[str, Any],
    ) -> FinalOutcome:
        read = ContextRequest(ref=ref, payload=payload, policy=policy, seq=self._next_seq())
        try:
            context = await load_context(read)
        except (ActivityError, ApplicationError) as err:  # a local activity's may be unwrapped
            if (failure := await dead_letter_failure(ref, "load_context", err)) is None:
                raise
            return await self._finish(EventState.DEAD_LETTERED, failure.code)
        if context.status == "stopped":
            return await self._finish(EventState.STOPPED, context.reason_code)
        self._set_state(EventState.CONTEXT_READY)
        self._contacts = context.tenant_contacts
        self._review.context_read(context.fields, workflow.now(), context.updated_at)
        return await self._review_loop(request, ref, policy, context.fields)

    async def _review_loop(
        self, request: IntakeRequest, ref: EventRef, policy: PolicySnapshot,
        fields: dict[str, str], first: DraftResult | None = None,
    ) -> FinalOutcome:
        """Draft, gate, review until approved or final; ``first``: a run resumed at the gate."""
        note: str | None = None
        pending = first
        while True:
            draft = pending or await self._draft_version(ref, policy, fields, note)
            pending = None
            if draft is None:
                return await self._finish(EventState.FAILED_VALIDATION, "draft_failed")
            if auto_routable(ref, policy, draft):  # triage only, and never with a reply
                return await auto_route(self, request, ref, policy, draft)
            # A new-shape run opens the review in the gate's own local activity.
            opener = ReviewOpener(self, ref, policy, draft) if shape.new_shape() else None
            gate = await pass_gate(ref, policy, draft, state=lambda: self._state,
                                   record=self._record, hold=self._hold,
                                   count=opener.count if opener else None)
            if gate is None:
                self._continue(request, self._carry("gate", draft, fields=fields))
            self._gate = gate
            if self._gate.route == "stop":
                state = (EventState.FAILED_VALIDATION if draft.status == "failed_validation"
                         else EventState.STOPPED)
                return await self._finish(state, self._gate.reason_code, draft=draft)
            decision = await self._review.await_decision(
                ref, self._gate, draft, state=self._state, record=self._record,
                opened=opener.opened if opener else None, entered=self._entered)
            if decision is None:
                return await self._finish(EventState.EXPIRED, "review_deadline_passed")
            if decision.decision == "reject":
                return await self._finish(EventState.REJECTED, "reviewer_rejected",
                                          decision=decision)
            if decision.decision == "approve":
                break
            self._review.ask(decision.reason)
            note = decision.reason
            await self._record([EventState.CONTEXT_READY], "reviewer asked for information",
                               decision=decision)

        if draft.draft is None:
            # An unreadable draft has nothing to send: the reviewer should have asked for info.
            return await self._finish(EventState.STOPPED, "nothing_to_send", decision=decision)
        if shape.new_shape():  # re-count, record and mint in one local activity
            return await approve_and_send(self, request, ref, policy, draft, decision)
        # Counted again: another approved event for this customer may have sent meanwhile.
        counts = await count_gate_inputs(ref, policy)
        final = evaluate_gate(policy, draft, sends_today=counts.sends_today)
        if final.route == "stop":
            return await self._finish(EventState.STOPPED, final.reason_code, decision=decision)
        await self._record([EventState.APPROVED], f"approved by {decision.reviewer}",
                           decision=decision)
        return await self._execute(request, ref, policy, draft, decision)

    async def _draft_version(
        self, ref: EventRef, policy: PolicySnapshot, fields: dict[str, str], note: str | None
    ) -> DraftResult | None:
        version = (self._draft.version + 1) if self._draft else 1
        draft: DraftResult
        try:
            if is_triage(ref):  # the event type picks step 4's activity (workflows/triage.py)
                draft = await triage_version(ref, policy, fields, note, version, self._contacts,
                                             self._review.asked)
            else:
                draft = await workflow.execute_activity_method(
                    DraftActivities.draft_message,
                    DraftRequest(ref=ref, context=fields, policy_version=policy.version,
                                 prompt_version=PROMPT_VERSION, version=version,
                                 reviewer_note=note, reviewer_notes=self._review.asked,
                                 rule=policy.rule, tenant_contacts=self._contacts),
                    task_queue=DRAFT_TASK_QUEUE,
                    start_to_close_timeout=t.DRAFT_TIMEOUT, retry_policy=t.DRAFT_RETRY,
                    summary=f"draft version {version}: model proposes, validator checks",
                )
        except ActivityError as err:
            workflow.logger.warning("draft failed: %s", err.cause)
            return None
        self._draft = draft
        return draft
