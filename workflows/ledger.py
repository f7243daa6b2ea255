"""State bookkeeping of a ProcessEventWorkflow run: the numbered transitions, the state in the
three places that must agree (workflow query, search attribute, PostgreSQL row), the outcome.

A base class, not a helper object, because every step of the run writes through it; it holds no
handlers, so ``ProcessEventWorkflow`` stays the only place Temporal looks for them.
Deterministic like any workflow code.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime, timedelta

from temporalio import workflow
from temporalio.common import SearchAttributeUpdate

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
    from workflows.search_attributes import REVIEW_DUE, REVIEW_TICKET, STATE
    from workflows.shape import new_shape

#: workflow.patched() id: the search attribute changes only where an operator filters.
COALESCED_SEARCH_ATTRIBUTES = "coalesced-search-attributes"
#: States an operator or reviewer filters on: the search attribute shows each as it is entered.
#: The others (CONTEXT_READY, DRAFTED, APPROVED, UNKNOWN_WRITE) are in the workflow query and
#: the PostgreSQL row at once, and in the attribute only when they end a queue (below).
SHOWN = frozenset({
    EventState.VALIDATED, EventState.HELD_AT_GATE, EventState.AWAITING_REVIEW,
    EventState.EXECUTING, EventState.RECONCILING, EventState.SUCCEEDED, EventState.QUARANTINED,
    EventState.DUPLICATE, EventState.SUPERSEDED, EventState.STOPPED,
    EventState.FAILED_VALIDATION, EventState.REJECTED, EventState.EXPIRED,
    EventState.DEAD_LETTERED,
})
#: Leaving one of these must show at once, or the record stays in a reviewer's list.
QUEUES = frozenset({EventState.HELD_AT_GATE, EventState.AWAITING_REVIEW})
#: A one-marker-shape run (ADR 0053) shows no VALIDATED: its first upsert is the first state an
#: operator filters on (a queue or a final state), carrying tenant and type if the start did not.
SHOWN_ONE_MARKER = SHOWN - {EventState.VALIDATED}


class EventLedger:
    def __init__(self) -> None:
        self._state = EventState.RECEIVED
        #: Each transition's number, given here so the store can ignore a retried write.
        self._seq = 0
        self._ref: EventRef | None = None
        self._policy: PolicySnapshot | None = None
        self._fingerprint: str | None = None
        #: Set once validation returned (``workflow.patched``): False replays older runs,
        #: which upserted the state on every transition.
        self._coalesce = False
        self._shown: EventState | None = None
        #: Attributes due with the next state shown (new shape: tenant and type, held from
        #: VALIDATED, which is not shown, to the first state that is).
        self._unshown: tuple[SearchAttributeUpdate, ...] = ()

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def _set_state(self, state: EventState, *,
                   with_: Sequence[SearchAttributeUpdate] = ()) -> None:
        """The new state; in the search attribute (one upsert, carrying ``with_`` too) when
        an operator filters on it. APPROVED is never shown alone: EXECUTING follows it in the
        same activation."""
        self._state = state
        # The Web UI's "current details" of the run: the state only, never customer data. Not a
        # command, so histories recorded before it replay unchanged.
        workflow.set_current_details(f"state {state.value}")
        if not self._coalesce:
            workflow.upsert_search_attributes([STATE.value_set(state.value)])
            return
        one_marker = new_shape()
        shown = state != self._shown and state != EventState.APPROVED and (
            state in (SHOWN_ONE_MARKER if one_marker else SHOWN) or self._shown in QUEUES)
        if one_marker and not shown:
            self._unshown = (*self._unshown, *with_)
            return
        updates = [*self._unshown, *with_, *([STATE.value_set(state.value)] if shown else [])]
        self._unshown = ()
        if shown and self._shown == EventState.AWAITING_REVIEW and one_marker:
            # Off the queue, off its ticket: a stale ticket never lists (issue 33).
            updates.append(REVIEW_TICKET.value_unset())
        if shown:
            self._shown = state
        if updates:
            workflow.upsert_search_attributes(updates)

    def _show_later(self, state: EventState, after: timedelta) -> None:
        """Quiet shape (ADR 0056): ``state`` at once in the workflow query and the Web UI's
        details, in the search attribute only if the run is still in it ``after`` from now. A
        send that ends sooner shows its final state directly, in the upsert that also takes the
        record off the reviewers' queue (one upsert fewer); one that outlasts it (a slow
        target, a kill switch's hold) shows it then, so an operator still finds it. The timer
        is left to lapse, never cancelled: a timer pending when the run completes writes
        nothing, where a cancel is a history event."""
        self._state = state
        workflow.set_current_details(f"state {state.value}")

        def show() -> None:
            if self._state == state:
                self._set_state(state)

        asyncio.get_running_loop().call_later(after.total_seconds(), show)

    def _step(self, states: list[EventState], reason: str, *,
              draft: DraftResult | None = None, decision: ReviewDecision | None = None,
              outcome: FinalOutcome | None = None,
              reason_code: str | None = None) -> StepRecord:
        """``states`` as numbered transitions from the current state (``_seq`` advances) with
        the step's own write: what a store step writes. The run's state is not changed here."""
        assert self._ref is not None
        transitions = []
        previous = self._state
        for state in states:
            transitions.append(Transition(seq=self._next_seq(), from_state=previous,
                                          to_state=state, actor=self._actor(decision),
                                          reason=reason))
            previous = state
        return StepRecord(ref=self._ref, transitions=transitions, draft=draft, decision=decision,
                          outcome=outcome, reason_code=reason_code,
                          policy_version=self._policy.version if self._policy else None)

    async def _record(self, states: list[EventState], reason: str, *,
                      draft: DraftResult | None = None, decision: ReviewDecision | None = None,
                      outcome: FinalOutcome | None = None, reason_code: str | None = None,
                      review_due_at: datetime | None = None,
                      shown_with: Sequence[SearchAttributeUpdate] = ()) -> None:
        """One local activity writing the transitions and the step's own write; entering a
        review (``review_due_at`` given) also stamps its SLA on the events row, and its upsert
        carries ``shown_with`` (the review's ticket) besides the due time."""
        step = self._step(states, reason, draft=draft, decision=decision, outcome=outcome,
                          reason_code=reason_code)
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
        self._entered(states[-1], review_due_at=review_due_at, shown_with=shown_with)

    def _entered(self, state: EventState, *, review_due_at: datetime | None = None,
                 shown_with: Sequence[SearchAttributeUpdate] = ()) -> None:
        """``state`` once its step is written; a review's due time (and ``shown_with``) go in
        the same upsert (older runs upserted the due time on its own: ReviewDesk)."""
        if review_due_at is not None and self._coalesce:
            self._set_state(state, with_=[REVIEW_DUE.value_set(review_due_at), *shown_with])
        else:
            self._set_state(state)

    def _actor(self, decision: ReviewDecision | None) -> str:
        return f"reviewer:{decision.reviewer}" if decision else "workflow"

    async def _finish(self, state: EventState, reason_code: str | None, *,
                      draft: DraftResult | None = None, decision: ReviewDecision | None = None,
                      receipt: Receipt | None = None) -> FinalOutcome:
        outcome = self._outcome(state, reason_code, receipt)
        await self._record([state], reason_code or state.value.lower(), draft=draft,
                           decision=decision, outcome=outcome, reason_code=reason_code)
        return outcome

    def _closed(self, state: EventState, reason_code: str | None, receipt: Receipt | None,
                seq: int) -> FinalOutcome:
        """The end the send recorded itself under ``seq`` (ADR 0057: ``closing_step``, the same
        transition and outcome ``_finish`` would write): the run takes its number and shows the
        state, with no local activity."""
        assert seq == self._seq + 1
        self._seq = seq
        outcome = self._outcome(state, reason_code, receipt)
        self._entered(state)
        return outcome

    def _outcome(self, state: EventState, reason_code: str | None,
                 receipt: Receipt | None) -> FinalOutcome:
        ref = self._ref
        assert ref is not None
        return FinalOutcome(
            workflow_id=ref.workflow_id, tenant_id=ref.tenant_id, event_id=ref.event_id,
            state=state, reason_code=reason_code, receipt=receipt,
            policy_version=self._policy.version if self._policy else None,
            payload_fingerprint=self._fingerprint,
        )
