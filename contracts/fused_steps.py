"""Store-only steps of a ProcessEvent run fused into one local activity each (ADR 0053): the
gate's counts with the review's opening, and the approval's re-count with its record and the
action token's mint. The gate stays the pure ``policies.gate.evaluate_gate``: the activity
applies it to the counts it read to decide whether to write, and the workflow applies it to the
same counts (returned) to decide where the run goes, so both always agree."""

from __future__ import annotations

from contracts.actions import MintedToken, MintRequest
from contracts.base import Frozen
from contracts.drafting import DraftResult
from contracts.policy import PolicySnapshot
from contracts.review import GateCounts, GateCountsRequest, ReviewOpening, StepRecord


class GatedOpening(Frozen):
    """Input of ``gate_and_open_review``: count the gate's inputs and, only when the gate on
    those counts routes ``draft`` to review, write ``opening`` (DRAFTED and AWAITING_REVIEW, the
    draft, the SLA) in the same round trip."""

    counts: GateCountsRequest
    policy: PolicySnapshot
    draft: DraftResult
    opening: ReviewOpening


class ApprovalStep(Frozen):
    """Input of ``approve_and_mint``: re-count this customer's sends and, only when the gate
    still lets the approved ``draft`` go, record ``approval`` (APPROVED with the decision) and
    mint the action token for ``mint``."""

    counts: GateCountsRequest
    policy: PolicySnapshot
    draft: DraftResult
    approval: StepRecord
    mint: MintRequest


class ApprovalResult(Frozen):
    """The counts read (by a retry that found its approval recorded: the sends before that
    approval); ``minted`` None when the gate stopped the send (nothing was written)."""

    counts: GateCounts
    minted: MintedToken | None = None
