"""Continue-as-new of a held ProcessEventWorkflow run: what goes into the carry and how the new
run takes it back (``contracts.carry.RunCarry``). Deterministic like any workflow code.

The new run gets the same ``IntakeRequest`` (so a later delivery is still compared with the
first one's payload) and the carry; it restarts no step: no new draft, no new review, no
second receipt, the same transition numbers.
"""

from __future__ import annotations

from typing import Literal

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import DraftResult, ExecuteRequest, ReviewDecision
    from contracts.carry import RunCarry
    from workflows.sending import SendingLedger


def carry_of(wf: SendingLedger, at: Literal["gate", "send"], draft: DraftResult, *,
             fields: dict[str, str] | None = None, decision: ReviewDecision | None = None,
             send: ExecuteRequest | None = None, queue: str | None = None) -> RunCarry:
    assert wf._intake is not None and wf._fingerprint is not None
    review = wf._review
    return RunCarry(
        at=at, intake=wf._intake, fingerprint=wf._fingerprint,
        intake_calls=max(wf._intake_calls, 1), seq=wf._seq, state=wf._state,
        shown=wf._shown, coalesce=wf._coalesce, context_fields=fields or {}, draft=draft,
        requester=review.requester, refusals=review.refusals, info_rounds=review.info_rounds,
        reviewer_notes=review.asked,
        decision=decision, send=send, queue=queue, hold_rounds=wf._hold.rounds,
        generation=wf._generation + 1, tenant_contacts=wf._contacts,
    )


def restore(wf: SendingLedger, carry: RunCarry) -> None:
    intake = carry.intake
    wf._intake, wf._intake_calls = intake, carry.intake_calls
    wf._fingerprint, wf._ref, wf._policy = carry.fingerprint, intake.ref, intake.policy
    wf._seq, wf._state, wf._shown, wf._coalesce = (carry.seq, carry.state, carry.shown,
                                                  carry.coalesce)
    wf._draft, wf._generation = carry.draft, carry.generation
    wf._contacts = carry.tenant_contacts
    review = wf._review
    review.requester, review.refusals = carry.requester, carry.refusals
    review.info_rounds, review.asked = carry.info_rounds, carry.reviewer_notes
    review.context_read(carry.context_fields)  # the ticket's evidence (no read time carried)
    wf._hold.rounds = carry.hold_rounds
    workflow.set_current_details(f"state {carry.state.value} (continued, run {carry.generation})")
