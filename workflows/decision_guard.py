"""The review update's validator: a decision refused here never enters the run's history.

Two checks, in order: the token names its reviewer (``guard_decision``), then the decision is
well formed, for the review now open, and allowed by the policy (``validate_decision``). A
refusal is audited in PostgreSQL by the edge that sent it (``tollgate/ops/refusals.py``), so a
retry storm of refused decisions costs the run no history (ADR 0028).

Deterministic enough for a validator (which Temporal runs only when an update arrives, never on
replay): the check is the pure ``policies.decision_identity``, the verifier is the one the
worker installed at start, and the time is ``workflow.now()``. A process that installed no
verifier (a bare test worker) checks nothing here; every worker Tollgate ships installs one
(``tollgate/runtime/identity.py``, ADR 0026).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from contracts import DraftResult, EventRef, EventState, ReviewDecision
    from contracts.policy import PolicySnapshot
    from policies.decision_identity import check_decision_identity, installed_verifier
    from policies.edge_text import check_string

if TYPE_CHECKING:  # the guard needs only the desk's type
    from workflows.review import ReviewDesk


def guard_decision(decision: ReviewDecision) -> None:
    """Raise (so the update is rejected) unless the decision's token names its reviewer."""
    verifier = installed_verifier()
    if verifier is None:
        return
    verdict = check_decision_identity(decision, verifier=verifier, now=workflow.now())
    if not verdict.ok:
        workflow.logger.info("review update rejected by the validator: %s", verdict.reason_code)
        raise ApplicationError(verdict.message, type=verdict.reason_code, non_retryable=True)


def validate_decision(desk: ReviewDesk, decision: ReviewDecision, *, state: EventState,
                      ref: EventRef | None, policy: PolicySnapshot | None,
                      draft: DraftResult | None) -> None:
    """Raise (so the update is rejected, nothing recorded) for a malformed, stale or
    unauthorised decision, with the reason code the handler would have recorded.

    Identities are always folded (``IDENTITY_KEY_SOD``): a validator may not call
    ``workflow.patched()``, and refusing a look-alike that an older run's handler would have let
    through only makes the check stricter. A NUL in the reason is refused here, so a decision
    that passes can always be stored (issue 25).
    """
    bad = next((v for v in (
        check_string(decision.request_id, "$.request_id", free_text=False),
        check_string(decision.reviewer, "$.reviewer", free_text=False),
        check_string(decision.role, "$.role", free_text=False),
        check_string(decision.reason, "$.reason")) if v is not None), None)
    if bad is not None:
        raise ApplicationError(f"{bad.field}: {bad.rule}", type="malformed_decision",
                               non_retryable=True)
    if ref is None or policy is None:
        raise ApplicationError(f"not waiting for review (state {state})",
                               type="review_closed", non_retryable=True)
    verdict = desk.authorize(decision, state=state, ref=ref, policy=policy, draft=draft,
                             fold=True)
    if not verdict.ok:
        raise ApplicationError(verdict.message, type=verdict.reason_code or "refused",
                               non_retryable=True)


def without_token(decision: ReviewDecision) -> ReviewDecision:
    """The decision as the workflow keeps and stores it: checked, so the token is not needed."""
    return decision.model_copy(update={"token": None}) if decision.token else decision
