"""ProcessEventWorkflow: one business event through the seven steps.

Deterministic orchestration only. Every read or write of the outside world is an activity; the
policy gate and reviewer authorisation are pure functions from ``policies``. Each state change
is numbered (``seq``) by this workflow so the store can ignore a retried write.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from types import MappingProxyType
from typing import Any

from temporalio import workflow
from temporalio.common import SearchAttributeKey
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from activities.context import ContextActivities
    from activities.draft import DraftActivities
    from activities.execute import ExecuteActivities
    from activities.intake import IntakeActivities
    from activities.review import ReviewActivities
    from activities.steps import StepActivities
    from contracts import (
        ActionRequest,
        ContextRequest,
        DraftRequest,
        DraftResult,
        EscalationNotice,
        EventRef,
        EventState,
        ExecuteRequest,
        ExecuteResult,
        FinalOutcome,
        GateCounts,
        GateCountsRequest,
        IntakeAck,
        IntakeRequest,
        IntakeResult,
        Receipt,
        ReconcileRequest,
        ReconcileResult,
        RefusedDecision,
        ReviewAck,
        ReviewDecision,
        ReviewOpening,
        ReviewTicket,
        StepRecord,
        Transition,
    )
    from contracts.policy import PolicySnapshot
    from policies.gate import GateDecision, authorize_decision, evaluate_gate
    from policies.keys import action_key, payload_fingerprint
    from policies.prompts import PROMPT_VERSION
    from workflows import timeouts as t
    from workflows.reconcile_write import ReconcileWriteWorkflow

STATE = SearchAttributeKey.for_keyword("TollgateState")
TENANT = SearchAttributeKey.for_keyword("TollgateTenant")
EVENT_TYPE = SearchAttributeKey.for_keyword("TollgateEventType")
#: When the open review's SLA passes; set each time a review opens (``tollgate review list``).
REVIEW_DUE = SearchAttributeKey.for_datetime("TollgateReviewDue")

DRAFT_TASK_QUEUE = "tollgate-draft"
#: workflow.patched() ids, one per change of the command sequence; never reuse or remove one
#: while histories recorded before it may still be running (tests/replay keeps both paths).
INTAKE_AS_LOCAL_ACTIVITY = "intake-as-local-activity"
#: Where an execute or reconcile result ends the event.
_FINAL_STATE = MappingProxyType({
    "succeeded": EventState.SUCCEEDED, "resent": EventState.SUCCEEDED,
    "rejected": EventState.REJECTED, "stopped": EventState.STOPPED,
})
#: How often an action held by a closed kill switch looks again.
KILL_SWITCH_RECHECK = timedelta(seconds=30)


@workflow.defn(name="ProcessEvent")
class ProcessEventWorkflow:
    def __init__(self) -> None:
        self._state = EventState.RECEIVED
        self._seq = 0
        self._intake: IntakeResult | None = None
        self._intake_calls = 0
        self._ref: EventRef | None = None
        self._policy: PolicySnapshot | None = None
        self._gate: GateDecision | None = None
        self._draft: DraftResult | None = None
        self._request_id: str | None = None
        self._decision: ReviewDecision | None = None
        self._refusals = 0
        self._info_rounds = 0
        self._requester: str | None = None
        self._review_deadline: datetime | None = None
        self._review_due: datetime | None = None
        self._fingerprint: str | None = None

    # --- producer ------------------------------------------------------------------------

    @workflow.update
    async def intake(self, delivery: IntakeRequest) -> IntakeAck:
        """Answers the producer as soon as validation and the idempotency gate are done. A later
        delivery with the same key but another payload is a conflict, not a duplicate."""
        self._intake_calls += 1
        first = self._intake_calls == 1
        await workflow.wait_condition(lambda: self._intake is not None)
        intake = self._intake
        assert intake is not None
        wf_id = workflow.info().workflow_id
        if not first and payload_fingerprint(delivery.raw) != self._fingerprint:
            return IntakeAck(status="invalid", workflow_id=wf_id, state=self._state,
                             reason_code="idempotency_conflict",
                             message="this idempotency_key was already used with another payload")
        if intake.status in ("quarantined", "dead_lettered", "superseded"):
            # Each is final for this delivery: the producer must fix or stop sending it.
            return IntakeAck(status="invalid", workflow_id=wf_id, state=self._state,
                             reason_code=intake.reason_code, message=intake.message)
        if intake.status == "duplicate" or not first:
            return IntakeAck(status="duplicate", workflow_id=wf_id, state=self._state,
                             reason_code="duplicate", previous=intake.previous)
        return IntakeAck(status="accepted", workflow_id=wf_id, state=self._state,
                         reason_code=intake.reason_code, message=intake.message)

    @workflow.query
    def state(self) -> EventState:
        return self._state

    # --- reviewer --------------------------------------------------------------------------

    @workflow.query
    def review_ticket(self) -> ReviewTicket:
        draft = self._draft
        return ReviewTicket(
            workflow_id=workflow.info().workflow_id, state=self._state,
            request_id=self._request_id, draft_version=draft.version if draft else None,
            draft=draft.draft if draft else None,
            context_fields=sorted(draft.draft.source_refs) if draft and draft.draft else [],
            required_roles=list(self._gate.required_roles) if self._gate else [],
            risk=self._gate.risk if self._gate else None,
            policy_version=self._policy.version if self._policy else None,
            review_deadline=self._review_deadline,
            review_due_at=self._review_due,
            flags=list(draft.flags) if draft else [],
        )

    @workflow.update
    async def review(self, decision: ReviewDecision) -> ReviewAck:
        return await self._consider(decision)

    @workflow.signal
    async def approve(self, decision: ReviewDecision) -> None:
        await self._consider(decision.model_copy(update={"decision": "approve"}))

    @workflow.signal
    async def reject(self, decision: ReviewDecision) -> None:
        await self._consider(decision.model_copy(update={"decision": "reject"}))

    @workflow.signal
    async def request_info(self, decision: ReviewDecision) -> None:
        await self._consider(decision.model_copy(update={"decision": "request_info"}))

    async def _consider(self, decision: ReviewDecision) -> ReviewAck:
        ref, policy = self._ref, self._policy
        if ref is None or policy is None:
            return ReviewAck(accepted=False, state=self._state,
                             message=f"not waiting for review (state {self._state})")
        verdict = authorize_decision(
            policy, decision, tenant_id=ref.tenant_id, decision_tenant_id=decision.tenant_id,
            requester=self._requester, draft_author=self._draft.provider if self._draft else None,
            expected_request_id=self._request_id,
            current_draft_version=self._draft.version if self._draft else None,
            review_open=self._state == EventState.AWAITING_REVIEW and self._decision is None,
            info_rounds=self._info_rounds,
        )
        if not verdict.ok:
            self._refusals += 1
            await workflow.execute_local_activity_method(
                StepActivities.record_refusal,
                RefusedDecision(ref=ref, number=self._refusals, decision=decision,
                                refusal_code=verdict.reason_code or "refused",
                                policy_version=policy.version),
                start_to_close_timeout=t.STORE_TIMEOUT, retry_policy=t.STORE_RETRY,
            )
            workflow.logger.info("review decision refused: %s", verdict.reason_code)
            return ReviewAck(accepted=False, state=self._state, message=verdict.message,
                             reason_code=verdict.reason_code)
        self._decision = decision
        return ReviewAck(accepted=True, state=self._state, message=f"{decision.decision} accepted")

    # --- the run -------------------------------------------------------------------------

    @workflow.run
    async def run(self, request: IntakeRequest) -> FinalOutcome:
        outcome = await self._run(request)
        await workflow.wait_condition(workflow.all_handlers_finished)
        return outcome

    async def _run(self, request: IntakeRequest) -> FinalOutcome:
        self._fingerprint = payload_fingerprint(request.raw)
        if workflow.patched(INTAKE_AS_LOCAL_ACTIVITY):
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
        self._ref, self._policy = intake.ref, intake.policy
        if intake.event is not None:
            self._requester = intake.event.source
            workflow.upsert_search_attributes([TENANT.value_set(intake.event.tenant_id),
                                               EVENT_TYPE.value_set(intake.event.event_type)])
        terminal = {
            "quarantined": EventState.QUARANTINED, "duplicate": EventState.DUPLICATE,
            "dead_lettered": EventState.DEAD_LETTERED, "superseded": EventState.SUPERSEDED,
        }.get(intake.status)
        if terminal is not None:
            self._set_state(terminal)
            self._intake = intake
            previous = intake.previous
            return FinalOutcome(
                workflow_id=workflow.info().workflow_id, state=terminal,
                tenant_id=intake.ref.tenant_id if intake.ref else None,
                event_id=intake.ref.event_id if intake.ref else None,
                reason_code=intake.reason_code, receipt=previous.receipt if previous else None,
                policy_version=previous.policy_version if previous else None,
                payload_fingerprint=self._fingerprint,
            )
        self._seq = 2
        self._set_state(EventState.VALIDATED)
        self._intake = intake
        assert intake.ref is not None and intake.policy is not None and intake.event is not None
        return await self._process(intake.ref, intake.policy, intake.event.payload)

    async def _process(
        self, ref: EventRef, policy: PolicySnapshot, payload: dict[str, Any]
    ) -> FinalOutcome:
        context = await workflow.execute_activity_method(
            ContextActivities.load_context,
            ContextRequest(ref=ref, payload=payload, policy=policy, seq=self._next_seq()),
            start_to_close_timeout=t.READ_TIMEOUT, retry_policy=t.READ_RETRY,
        )
        if context.status == "stopped":
            return await self._finish(EventState.STOPPED, context.reason_code)
        self._set_state(EventState.CONTEXT_READY)

        note: str | None = None
        while True:
            draft = await self._draft_version(ref, policy, context.fields, note)
            if draft is None:
                return await self._finish(EventState.FAILED_VALIDATION, "draft_failed")
            self._gate = await self._pass_gate(ref, policy, draft)
            if self._gate.route == "stop":
                state = (EventState.FAILED_VALIDATION if draft.status == "failed_validation"
                         else EventState.STOPPED)
                return await self._finish(state, self._gate.reason_code, draft=draft)
            decision = await self._await_review(ref, self._gate, draft)
            if decision is None:
                return await self._finish(EventState.EXPIRED, "review_deadline_passed")
            if decision.decision == "reject":
                return await self._finish(EventState.REJECTED, "reviewer_rejected",
                                          decision=decision)
            if decision.decision == "approve":
                break
            self._info_rounds += 1
            note = decision.reason
            await self._record([EventState.CONTEXT_READY], "reviewer asked for information",
                               decision=decision)

        if draft.draft is None:
            # An unreadable draft has nothing to send: the reviewer should have asked for info.
            return await self._finish(EventState.STOPPED, "nothing_to_send", decision=decision)
        # Counted again: another approved event for this customer may have sent meanwhile.
        counts = await self._count_gate_inputs(ref, policy)
        final = evaluate_gate(policy, draft, sends_today=counts.sends_today)
        if final.route == "stop":
            return await self._finish(EventState.STOPPED, final.reason_code, decision=decision)
        await self._record([EventState.APPROVED], f"approved by {decision.reviewer}",
                           decision=decision)
        return await self._execute(ref, policy, draft, decision)

    async def _count_gate_inputs(self, ref: EventRef, policy: PolicySnapshot) -> GateCounts:
        return await workflow.execute_local_activity_method(
            ReviewActivities.count_gate_inputs,
            GateCountsRequest(ref=ref, adapter=policy.rule.adapter, action=policy.rule.action,
                              as_of=workflow.now()),
            start_to_close_timeout=t.STORE_TIMEOUT, retry_policy=t.STORE_RETRY,
        )

    async def _pass_gate(
        self, ref: EventRef, policy: PolicySnapshot, draft: DraftResult
    ) -> GateDecision:
        """The gate on fresh counts. While it says ``hold`` the event waits here
        (HELD_AT_GATE) and asks again on a timer: a hold never approves and never sends."""
        draft_only = evaluate_gate(policy, draft)
        if draft_only.route == "stop":  # a refused or missing draft: final, nothing to count
            return draft_only
        while True:
            counts = await self._count_gate_inputs(ref, policy)
            gate = evaluate_gate(policy, draft, sends_today=counts.sends_today,
                                 overdue_reviews=counts.overdue_reviews)
            if gate.route != "hold":
                return gate
            if self._state != EventState.HELD_AT_GATE:
                await self._record([EventState.DRAFTED, EventState.HELD_AT_GATE],
                                   f"{gate.reason_code}: the tenant's reviews past their SLA "
                                   "reached the policy's limit; waiting at the gate", draft=draft)
            await workflow.sleep(t.GATE_HOLD_RECHECK)

    async def _draft_version(
        self, ref: EventRef, policy: PolicySnapshot, fields: dict[str, str], note: str | None
    ) -> DraftResult | None:
        version = (self._draft.version + 1) if self._draft else 1
        try:
            draft: DraftResult = await workflow.execute_activity_method(
                DraftActivities.draft_message,
                DraftRequest(ref=ref, context=fields, policy_version=policy.version,
                             prompt_version=PROMPT_VERSION, version=version,
                             reviewer_note=note, rule=policy.rule),
                task_queue=DRAFT_TASK_QUEUE,
                start_to_close_timeout=t.DRAFT_TIMEOUT, retry_policy=t.DRAFT_RETRY,
            )
        except ActivityError as err:
            workflow.logger.warning("draft failed: %s", err.cause)
            return None
        self._draft = draft
        return draft

    async def _await_review(
        self, ref: EventRef, gate: GateDecision, draft: DraftResult
    ) -> ReviewDecision | None:
        """Open a review and wait for a valid decision; at the SLA tell the fallback owner and
        keep waiting, at the deadline expire. A timeout never approves."""
        self._request_id = str(workflow.uuid4())
        self._decision = None
        start = workflow.now()
        self._review_due = start + gate.review_sla
        self._review_deadline = start + gate.review_deadline
        workflow.upsert_search_attributes([REVIEW_DUE.value_set(self._review_due)])
        opening = ([EventState.AWAITING_REVIEW] if self._state == EventState.HELD_AT_GATE
                   else [EventState.DRAFTED, EventState.AWAITING_REVIEW])
        await self._record(opening, "draft validated, waiting for an authorised reviewer",
                           draft=draft, review_due_at=self._review_due)
        try:
            await workflow.wait_condition(lambda: self._decision is not None,
                                          timeout=gate.review_sla)
        except TimeoutError:
            notified = await self._notify_fallback_owner(ref, gate, draft)
            await self._record([EventState.AWAITING_REVIEW],
                               f"review SLA passed, escalated to {gate.fallback_owner}"
                               + ("" if notified else " (the notice could not be delivered)"))
            remaining = gate.review_deadline - (workflow.now() - start)
            try:
                await workflow.wait_condition(lambda: self._decision is not None,
                                              timeout=max(remaining, timedelta(seconds=1)))
            except TimeoutError:
                return None
        return self._decision

    async def _notify_fallback_owner(
        self, ref: EventRef, gate: GateDecision, draft: DraftResult
    ) -> bool:
        assert self._request_id and self._review_due and self._review_deadline
        notice = EscalationNotice(
            ref=ref, request_id=self._request_id, draft_version=draft.version,
            fallback_owner=gate.fallback_owner, review_due_at=self._review_due,
            review_deadline=self._review_deadline, policy_version=gate.policy_version,
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

    async def _execute(
        self, ref: EventRef, policy: PolicySnapshot, draft: DraftResult, decision: ReviewDecision
    ) -> FinalOutcome:
        assert draft.draft is not None
        rule = policy.rule
        action = ActionRequest(
            ref=ref, adapter=rule.adapter, action=rule.action,
            action_key=action_key(ref.tenant_id, ref.event_id, rule.adapter, rule.action),
            channel="sms", body=draft.draft.message, policy_version=policy.version,
            approved_by=decision.reviewer,
        )
        self._set_state(EventState.EXECUTING)
        exec_seq = self._next_seq()
        while True:
            result: ExecuteResult = await workflow.execute_activity_method(
                ExecuteActivities.execute_action,
                ExecuteRequest(action=action, draft_version=draft.version, seq=exec_seq),
                start_to_close_timeout=t.EXECUTE_TIMEOUT, retry_policy=t.EXECUTE_RETRY,
            )
            if result.status != "held":
                break
            await workflow.sleep(KILL_SWITCH_RECHECK)
        if result.status != "unknown":
            return await self._finish(_FINAL_STATE[result.status], result.reason_code,
                                      receipt=result.receipt)
        await self._record([EventState.UNKNOWN_WRITE, EventState.RECONCILING],
                           "the target may hold the write; reconciling by key")
        settled: ReconcileResult = await workflow.execute_child_workflow(
            ReconcileWriteWorkflow.run,
            ReconcileRequest(ref=ref, action=action, lookup_window=t.RECONCILE_WINDOW),
            id=f"reconcile/{action.action_key}",
        )
        return await self._finish(_FINAL_STATE[settled.status],
                                  settled.reason_code or "reconciled", receipt=settled.receipt)

    # --- state bookkeeping -----------------------------------------------------------------

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def _set_state(self, state: EventState) -> None:
        self._state = state
        workflow.upsert_search_attributes([STATE.value_set(state.value)])

    async def _record(self, states: list[EventState], reason: str, *,
                      draft: DraftResult | None = None, decision: ReviewDecision | None = None,
                      outcome: FinalOutcome | None = None, reason_code: str | None = None,
                      review_due_at: datetime | None = None) -> None:
        """One local activity writing the transitions and the step's own write; entering a
        review (``review_due_at`` given) also stamps its SLA on the events row."""
        assert self._ref is not None
        transitions = []
        previous = self._state
        for state in states:
            transitions.append(Transition(seq=self._next_seq(), from_state=previous,
                                          to_state=state, actor=self._actor(decision),
                                          reason=reason))
            previous = state
        step = StepRecord(ref=self._ref, transitions=transitions, draft=draft, decision=decision,
                          outcome=outcome, reason_code=reason_code,
                          policy_version=self._policy.version if self._policy else None)
        if review_due_at is None:
            await workflow.execute_local_activity_method(
                StepActivities.record_step, step,
                start_to_close_timeout=t.STORE_TIMEOUT, retry_policy=t.STORE_RETRY,
            )
        else:
            await workflow.execute_local_activity_method(
                ReviewActivities.open_review, ReviewOpening(step=step, review_due_at=review_due_at),
                start_to_close_timeout=t.STORE_TIMEOUT, retry_policy=t.STORE_RETRY,
            )
        self._set_state(states[-1])

    def _actor(self, decision: ReviewDecision | None) -> str:
        return f"reviewer:{decision.reviewer}" if decision else "workflow"

    async def _finish(self, state: EventState, reason_code: str | None, *,
                      draft: DraftResult | None = None, decision: ReviewDecision | None = None,
                      receipt: Receipt | None = None) -> FinalOutcome:
        ref = self._ref
        assert ref is not None
        outcome = FinalOutcome(
            workflow_id=ref.workflow_id, tenant_id=ref.tenant_id, event_id=ref.event_id,
            state=state, reason_code=reason_code, receipt=receipt,
            policy_version=self._policy.version if self._policy else None,
            payload_fingerprint=self._fingerprint,
        )
        await self._record([state], reason_code or state.value.lower(), draft=draft,
                           decision=decision, outcome=outcome, reason_code=reason_code)
        return outcome
