"""The approval's store-only steps in one local activity (a one-marker-shape run, ADR 0053):
re-count this customer's sends, and only when the pure gate still lets the approved draft go,
record APPROVED with the decision and mint the action token for what was approved.

Each part is the activity it replaces, called in the order the workflow called them, so a
refusal reads the same (``no_approval_on_record`` from the mint) and a retry is as idempotent
(the transition's number, the token's id come from the workflow's input).
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
        counts = await self.review.count_gate_inputs(request.counts)
        gate = evaluate_gate(request.policy, request.draft, sends_today=counts.sends_today)
        if gate.route == "stop":
            return ApprovalResult(counts=counts)
        await self.steps.record_step(request.approval)
        minted = await self.tokens.mint_action_token(request.mint)
        return ApprovalResult(counts=counts, minted=minted)
