"""Is a review decision made by the person its token names? Pure; the workflow's update
validator calls it (ADR 0026).

The verifier is a callable the worker process installs at start (``install_verifier``): it
checks a token's signature against keys the process already holds and its expiry against the
time it is given, and does no I/O, so calling it inside an update validator is allowed. Update
validators do not run on replay, so a key rotated since does not change an old history.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from contracts import ReviewDecision
from contracts.identity import IdentityRefused, VerifiedIdentity

#: ``verifier(token, now)``: the token's verified identity, or ``IdentityRefused``.
DecisionVerifier = Callable[[str, datetime], VerifiedIdentity]

_installed: DecisionVerifier | None = None


def install_verifier(verifier: DecisionVerifier | None) -> None:
    """Set (or clear, with None) the verifier this process's workflows check decisions with.
    The one piece of process state in ``policies``: a worker holds one identity provider."""
    global _installed
    _installed = verifier


def installed_verifier() -> DecisionVerifier | None:
    return _installed


@dataclass(frozen=True)
class IdentityVerdict:
    ok: bool
    reason_code: str | None = None
    message: str = ""


def _no(code: str, message: str) -> IdentityVerdict:
    return IdentityVerdict(False, code, message)


def check_decision_identity(decision: ReviewDecision, *, verifier: DecisionVerifier,
                            now: datetime) -> IdentityVerdict:
    """The decision's token must verify and be a person's, and the decision's reviewer, role
    and tenant must be the token's. Whether that tenant and role may decide this event is the
    handler's ``authorize_decision``, which records its refusals (``cross_tenant``...)."""
    if not decision.token:
        return _no("missing_token", "a decision needs the reviewer's access token")
    try:
        who = verifier(decision.token, now)
    except IdentityRefused as exc:
        return _no(exc.code, f"token refused: {exc.message}")
    if who.service:
        return _no("service_account", "a service or shared account cannot decide a review")
    if decision.reviewer != who.reviewer:
        return _no("identity_mismatch", "the decision names another reviewer than its token")
    if decision.role not in who.roles:
        return _no("role_not_in_token", f"the token does not hold the role '{decision.role}'")
    if decision.tenant_id != who.tenant:
        return _no("identity_mismatch", "the decision names another tenant than its token")
    return IdentityVerdict(True)
