"""State bookkeeping of a ProcessEventWorkflow run: the numbered transitions, the state in the
three places that must agree (workflow query, search attribute, PostgreSQL row), the outcome.

A base class, not a helper object, because every step of the run writes through it; it holds no
handlers, so ``ProcessEventWorkflow`` stays the only place Temporal looks for them.
Deterministic like any workflow code.
"""

from __future__ import annotations

from datetime import datetime
from types import MappingProxyType

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from activities.review import ReviewActivities
    from activities.steps import StepActivities
    from contracts import (
        DraftResult,
        EventRef,
        EventState,
        FinalOutcome,
        Receipt,
        ReviewDecision,
        ReviewOpening,
        StepRecord,
        Transition,
    )
    from contracts.policy import PolicySnapshot
    from workflows import timeouts as t
    from workflows.search_attributes import STATE


#: Where an execute or reconcile result ends the event.
FINAL_STATE = MappingProxyType({
    "succeeded": EventState.SUCCEEDED, "resent": EventState.SUCCEEDED,
    "rejected": EventState.REJECTED, "stopped": EventState.STOPPED,
})


class EventLedger:
    def __init__(self) -> None:
        self._state = EventState.RECEIVED
        #: Each transition's number, given here so the store can ignore a retried write.
        self._seq = 0
        self._ref: EventRef | None = None
        self._policy: PolicySnapshot | None = None
        self._fingerprint: str | None = None

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def _set_state(self, state: EventState) -> None:
        self._state = state
        workflow.upsert_search_attributes([STATE.value_set(state.value)])
        # The Web UI's "current details" of the run: the state only, never customer data. Not a
        # command, so histories recorded before it replay unchanged.
        workflow.set_current_details(f"state {state.value}")

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
