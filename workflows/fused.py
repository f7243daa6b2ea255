"""Store-only steps of a one-marker-shape ProcessEvent run fused into one local activity each
(ADR 0053, issue 33): one marker and one round trip where there were two or three.

- ``ReviewOpener``: the gate's counts and, when the gate routes the draft to review, the
  review's opening (``gate_and_open_review``). The opening's transitions are numbered before
  the call; when the gate says hold or stop nothing was written and the numbers are given back.
- ``approve_and_send``: after an approval, the sends re-counted, APPROVED recorded and the
  action token minted (``approve_and_mint``), then the send.

The gate is the pure ``policies.gate.evaluate_gate`` on both sides: the activity applies it to
the counts it read to decide whether to write, the workflow applies it to the same counts
(returned) to decide where the run goes. Deterministic like any workflow code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from activities.approval import ApprovalActivities
    from activities.review import ReviewActivities
    from contracts import (
        DraftResult,
        EventRef,
        EventState,
        ExecuteRequest,
        FinalOutcome,
        GateCounts,
        GateCountsRequest,
        IntakeRequest,
        ReviewDecision,
        ReviewOpening,
        target_task_queue,
    )
    from contracts.actions import MintRequest
    from contracts.fused_steps import ApprovalResult, ApprovalStep, GatedOpening
    from contracts.policy import PolicySnapshot
    from policies.gate import evaluate_gate
    from workflows import shape
    from workflows import timeouts as t
    from workflows.failures import dead_letter_failure
    from workflows.review import OPENING_REASON, Opened

if TYPE_CHECKING:
    from workflows.sending import SendingLedger

class ReviewOpener:
    """One draft's way through the gate with the review opened in the same local activity."""

    def __init__(self, run: SendingLedger, ref: EventRef, policy: PolicySnapshot,
                 draft: DraftResult) -> None:
        self.run, self.ref, self.policy, self.draft = run, ref, policy, draft
        self.opened: Opened | None = None

    async def count(self) -> GateCounts:
        """The gate's counts; the review is opened too when the gate on them says review."""
        run, rule = self.run, self.policy.rule
        start = workflow.now()
        due = start + rule.review_sla
        states = ([EventState.AWAITING_REVIEW] if run._state == EventState.HELD_AT_GATE
                  else [EventState.DRAFTED, EventState.AWAITING_REVIEW])
        seq = run._seq
        step = run._step(states, OPENING_REASON, draft=self.draft)
        counts: GateCounts = await workflow.execute_local_activity_method(
            ReviewActivities.gate_and_open_review,
            GatedOpening(counts=GateCountsRequest(ref=self.ref, adapter=rule.adapter,
                                                  action=rule.action, as_of=start),
                         policy=self.policy, draft=self.draft,
                         opening=ReviewOpening(step=step, review_due_at=due)),
            start_to_close_timeout=t.STORE_TIMEOUT, retry_policy=t.STORE_RETRY,
        )
        gate = evaluate_gate(self.policy, self.draft, sends_today=counts.sends_today,
                             overdue_reviews=counts.overdue_reviews)
        if gate.route == "review":
            self.opened = Opened(state=states[-1], start=start, due=due)
        else:
            run._seq = seq  # nothing written: the numbers go to the step that follows
        return counts


async def approve_and_send(run: SendingLedger, request: IntakeRequest, ref: EventRef,
                           policy: PolicySnapshot, draft: DraftResult,
                           decision: ReviewDecision) -> FinalOutcome:
    """The approved draft to its target: re-counted, recorded and its token minted in one local
    activity, unless the daily limit filled meanwhile (STOPPED, nothing written)."""
    rule = policy.rule
    seq = run._seq
    approval = run._step([EventState.APPROVED], f"approved by {decision.reviewer}",
                         decision=decision)
    action = run._action(ref, policy, draft, decision)
    execute = ExecuteRequest(action=action, draft_version=draft.version, seq=run._next_seq())
    now = workflow.now()
    try:
        result: ApprovalResult = await workflow.execute_local_activity_method(
            ApprovalActivities.approve_and_mint,
            ApprovalStep(counts=GateCountsRequest(ref=ref, adapter=rule.adapter,
                                                  action=rule.action, as_of=now),
                         policy=policy, draft=draft, approval=approval,
                         mint=MintRequest(action=action, draft_version=draft.version,
                                          request_id=decision.request_id, as_of=now)),
            start_to_close_timeout=t.STORE_TIMEOUT, retry_policy=t.STORE_RETRY,
            summary="re-count, record the approval, mint the action token")
    except (ActivityError, ApplicationError) as err:  # a local activity's may come unwrapped
        # The approval was recorded; the mint refused it (no approval on record): as the
        # separate mint did, the send step's failure, dead-lettered. Only the mint fails for
        # good: the re-count and the record fail only as PostgreSQL does, retried while
        # STORE_RETRY has no limit, so APPROVED holds its number here; a bounded policy would
        # leave a gap at it (tests/faults/test_approval_step.py).
        run._set_state(EventState.APPROVED)
        run._set_state(EventState.EXECUTING)
        failure = await dead_letter_failure(ref, "execute_action", err, action=action,
                                            seq=execute.seq)
        if failure is None:
            raise
        return await run._finish(EventState.DEAD_LETTERED, failure.code)
    final = evaluate_gate(policy, draft, sends_today=result.counts.sends_today)
    if final.route == "stop" or result.minted is None:
        run._seq = seq  # nothing written
        return await run._finish(EventState.STOPPED, final.reason_code or "daily_limit",
                                 decision=decision)
    run._set_state(EventState.APPROVED)
    if shape.quiet():  # shown only if the send outlasts it (ADR 0056)
        run._show_later(EventState.EXECUTING, t.EXECUTING_SHOWN_AFTER)
    else:
        run._set_state(EventState.EXECUTING)
    queue = target_task_queue(workflow.info().task_queue, action.adapter)
    return await run._send(request, draft, decision,
                           execute.model_copy(update={"action_token": result.minted.token}),
                           queue)
