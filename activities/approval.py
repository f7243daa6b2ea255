"""The approval's store-only steps in one local activity (a one-marker-shape run, ADR 0053):
re-count this customer's sends, and only when the pure gate still lets the approved draft go,
record APPROVED with the decision and mint the action token for what was approved.

Each part is the activity it replaces, called in the order the workflow called them, so a
refusal reads the same (``no_approval_on_record`` from the mint) and a retry is as idempotent
(the transition's number, the token's id come from the workflow's input).

A retried attempt does what the first decided, it does not decide again (docs/receipts.md,
"A retried approval"). An attempt that fails after APPROVED is recorded (the mint's read of it
failing as PostgreSQL does) is retried, and during the backoff other sends may fill the daily
limit; a fresh re-count would then stop the run, whose STOPPED, written under APPROVED's
number, would replace the recorded approval as a lost workflow task's step does. So an attempt
after the first that finds this very approval recorded (same transition under its number, same
accepted decision) counts only the sends recorded before the approval, as they stood when it
was decided; the sends made during its backoff came after the approval, as they may between
any approval and its send.

Why the attempt number tells a retry from a lost workflow task's re-run: a local activity's
attempts are counted by the worker running the workflow task, in that task, while the run's
history stands still (``STORE_RETRY`` backs off at most 10 s, under the SDK's 1 min local retry
threshold, so never through a timer in the history). A task lost and run again schedules the
step anew, at attempt 1: that first attempt finds the lost task's approval and still counts
afresh, since the run that goes on may take another path (the replacement rule,
``adapters/postgres/steps.py``). What this does not tell apart: a re-run whose first attempt
failed before recording, whose second then finds the lost task's identical approval, takes it
as its own; the store and the run still agree (the same approval, the same number).
"""

from __future__ import annotations

from temporalio import activity

from activities.action_token import ActionTokenActivities
from activities.review import ReviewActivities
from activities.steps import StepActivities
from contracts.fused_steps import ApprovalResult, ApprovalStep
from policies.gate import evaluate_gate


class ApprovalActivities:
    def __init__(self, review: ReviewActivities, steps: StepActivities,
                 tokens: ActionTokenActivities) -> None:
        self.review = review
        self.steps = steps
        self.tokens = tokens

    @activity.defn
    async def approve_and_mint(self, request: ApprovalStep) -> ApprovalResult:
        recorded = None
        if activity.info().attempt > 1:
            recorded = await self.steps.recorded_at(request.approval)
        counts = await self.review.counts(request.counts, sent_before=recorded)
        gate = evaluate_gate(request.policy, request.draft, sends_today=counts.sends_today)
        if gate.route == "stop":
            return ApprovalResult(counts=counts)
        if recorded is None:
            await self.steps.record_step(request.approval)
        minted = await self.tokens.mint_action_token(request.mint)
        return ApprovalResult(counts=counts, minted=minted)
