"""The update validator's identity check: a decision refused here never enters history.

Deterministic enough for a validator (which Temporal runs only when an update arrives, never on
replay): the check is the pure ``policies.decision_identity``, the verifier is the one the
worker installed at start, and the time is ``workflow.now()``. A process that installed no
verifier (a bare test worker) checks nothing here; every worker Tollgate ships installs one
(``tollgate/runtime/identity.py``, ADR 0026).
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from contracts import ReviewDecision
    from policies.decision_identity import check_decision_identity, installed_verifier


def guard_decision(decision: ReviewDecision) -> None:
    """Raise (so the update is rejected) unless the decision's token names its reviewer."""
    verifier = installed_verifier()
    if verifier is None:
        return
    verdict = check_decision_identity(decision, verifier=verifier, now=workflow.now())
    if not verdict.ok:
        workflow.logger.info("review update rejected by the validator: %s", verdict.reason_code)
        raise ApplicationError(verdict.message, type=verdict.reason_code, non_retryable=True)


def without_token(decision: ReviewDecision) -> ReviewDecision:
    """The decision as the workflow keeps and stores it: checked, so the token is not needed."""
    return decision.model_copy(update={"token": None}) if decision.token else decision
