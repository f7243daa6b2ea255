"""The policy gate: pure decisions the event workflow takes from a policy snapshot.

Nothing here reads a clock, the network or a file: ``now`` and every count come in as
arguments, so a replayed workflow takes exactly the same decisions. A business outcome is a
frozen verdict with a machine ``reason_code``, never an exception; only a caller's programming
error (a naive ``now``, a negative count) raises ``ValueError``.

The model's ``confidence`` is deliberately never read here: it is recorded, and changes nothing.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Literal

from pydantic import model_validator

from contracts import CustomerRecord, DraftResult, Frozen, ReviewDecision
from contracts.policy import PolicyRule, PolicySnapshot, Risk
from policies.normalise import identity_key

ContextReason = Literal["missing_source", "no_consent", "stale_context"]
GateRoute = Literal["review", "stop", "hold"]
AuthorizationReason = Literal[
    "cross_tenant",
    "review_closed",
    "wrong_request",
    "stale_draft_version",
    "role_not_allowed",
    "info_rounds_exhausted",
    "separation_of_duties",
    "unverified_signal",
]

# A validator finding that starts with a snake_case code ("unknown_source_ref: crm.email")
# lends the gate its code; free text does not, and the stop reads "failed_validation".
# A prefix match (the code, then ":" or the end); \Z, since "$" also matches before a final
# newline.
_FINDING_CODE = re.compile(r"([a-z][a-z0-9_]{0,63})(?::|\Z)")


class ContextVerdict(Frozen):
    ok: bool
    reason_code: ContextReason | None = None
    message: str = "context is usable"

    @model_validator(mode="after")
    def _reason_iff_refused(self) -> ContextVerdict:
        if self.ok == (self.reason_code is not None):
            raise ValueError("a refusal needs a reason_code and an ok verdict has none")
        return self


class GateDecision(Frozen):
    """Where the event goes after drafting. ``hold`` means: wait at the gate and ask again
    later (the tenant's review backlog is over its limit); it is never a send and never final."""

    route: GateRoute
    required_roles: tuple[str, ...]
    risk: Risk
    review_sla: timedelta
    review_deadline: timedelta
    fallback_owner: str
    policy_version: str
    reason_code: str | None = None
    #: The count the daily limit was judged on (the review page shows what is left).
    sends_today: int | None = None


class Authorization(Frozen):
    """Whether a reviewer's decision counts. ``message`` is shown to the reviewer and written
    to the audit trail, so it names roles and versions, never people or customer data."""

    ok: bool
    reason_code: AuthorizationReason | None = None
    message: str
    policy_version: str

    @model_validator(mode="after")
    def _reason_iff_refused(self) -> Authorization:
        if self.ok == (self.reason_code is not None):
            raise ValueError("a refusal needs a reason_code and an ok verdict has none")
        return self


def check_context(rule: PolicyRule, record: CustomerRecord | None, now: datetime) -> ContextVerdict:
    """Whether the record from the source system may be used to draft and send.

    Consent is checked before freshness: a revoked consent is the truer reason to record,
    and refreshing the record would not change the answer. A refusal stops the event.

    Args:
        now: timezone-aware; in a workflow, ``workflow.now()``.
    """
    if now.utcoffset() is None:
        raise ValueError("now must be timezone-aware (use workflow.now())")
    if record is None:
        return ContextVerdict(
            ok=False, reason_code="missing_source", message="the source system has no record"
        )
    if rule.consent_required and not record.consent_messaging:
        return ContextVerdict(
            ok=False, reason_code="no_consent", message="the customer has not consented"
        )
    # A record stamped in the future (source clock ahead of ours) has age < 0: it is fresh.
    if now - record.updated_at > rule.max_context_age:
        return ContextVerdict(
            ok=False,
            reason_code="stale_context",
            message=f"the record is older than the {rule.max_context_age} the policy allows",
        )
    return ContextVerdict(ok=True)


def evaluate_gate(
    snapshot: PolicySnapshot, draft: DraftResult, *, sends_today: int = 0, overdue_reviews: int = 0
) -> GateDecision:
    """Route a draft: to review, to a final stop, or to wait at the gate.

    Stops come first (they are final whatever the backlog), then the backlog guard, then
    review. Every action goes to a human: there is no route that skips review.

    Args:
        sends_today: messages already sent to this customer today by this action, counted
            by the caller (a receipt in UNKNOWN counts: it may have been delivered).
        overdue_reviews: the tenant's open reviews already past their SLA.
    """
    if sends_today < 0 or overdue_reviews < 0:
        raise ValueError("counts cannot be negative")
    rule = snapshot.rule
    # An unreadable draft is shown raw to a human, so it is reviewed as high risk.
    risk: Risk = "high" if draft.status == "unreadable" else rule.risk
    route: GateRoute = "review"
    reason: str | None = None
    if draft.status == "failed_validation":
        route, reason = "stop", _finding_code(draft.findings)
    elif draft.status == "drafted" and draft.draft is None:
        route, reason = "stop", "draft_missing"
    elif sends_today >= rule.max_messages_per_customer_per_day:
        route, reason = "stop", "daily_limit"
    elif overdue_reviews >= rule.backlog_limit:
        # Never approve to drain a queue: new work waits until reviewers catch up.
        route, reason = "hold", "review_backlog"
    elif draft.status == "unreadable":
        reason = "unreadable_draft"
    return GateDecision(
        route=route,
        required_roles=rule.approver_roles,
        risk=risk,
        review_sla=rule.review_sla,
        review_deadline=rule.review_deadline,
        fallback_owner=rule.fallback_owner,
        policy_version=snapshot.version,
        reason_code=reason,
        sends_today=sends_today,
    )


def _finding_code(findings: list[str]) -> str:
    match = _FINDING_CODE.match(findings[0].strip()) if findings else None
    return match[1] if match else "failed_validation"


def authorize_decision(
    snapshot: PolicySnapshot,
    decision: ReviewDecision,
    *,
    tenant_id: str,
    decision_tenant_id: str | None,
    requester: str | None,
    draft_author: str | None,
    expected_request_id: str | None,
    current_draft_version: int | None,
    review_open: bool,
    info_rounds: int = 0,
    fold_identities: bool = True,
) -> Authorization:
    """Whether ``decision`` may count for the event's open review.

    Every kind of decision (approve, reject, request_info) needs an allowed role: a rejection
    is final, so it is authority too. Separation of duties binds only ``approve``: rejecting
    or asking for information can stop or delay an action, never cause one.

    Args:
        tenant_id: the event's tenant.
        decision_tenant_id: the reviewer's tenant as the caller's identity layer knows it;
            None when the channel carries no tenant (then only the workflow id scopes it).
        requester, draft_author: identities that may not approve when the rule says so;
            None when there is no such person (a scheduler, the model).
        expected_request_id: the open review's request id; None when none was opened.
        current_draft_version: the draft the review shows; None when there is none.
        info_rounds: request-info rounds already used on this event.
        fold_identities: compare identities by ``identity_key`` (False only when replaying a
            run that decided before it did: case and padding only, as then).
    """
    rule = snapshot.rule

    def refuse(code: AuthorizationReason, message: str) -> Authorization:
        return Authorization(
            ok=False, reason_code=code, message=message, policy_version=snapshot.version
        )

    # Checked first: a reviewer reaching into another tenant is a security incident whatever
    # state the review is in, and must be counted as one.
    if decision_tenant_id is not None and decision_tenant_id != tenant_id:
        return refuse("cross_tenant", "the reviewer belongs to another tenant")
    if not review_open:
        return refuse("review_closed", "this review is closed; the decision changes nothing")
    if expected_request_id is None or decision.request_id != expected_request_id:
        return refuse("wrong_request", "the decision answers another review request")
    if current_draft_version is None or decision.draft_version != current_draft_version:
        return refuse(
            "stale_draft_version",
            f"the decision is for draft version {decision.draft_version}, "
            f"the review shows version {current_draft_version}",
        )
    if decision.role.strip().casefold() not in rule.approver_roles:
        return refuse(
            "role_not_allowed",
            f"this role may not decide here; allowed: {', '.join(rule.approver_roles)}",
        )
    if decision.decision == "request_info" and info_rounds >= rule.max_info_rounds:
        return refuse(
            "info_rounds_exhausted",
            f"all {rule.max_info_rounds} request-info rounds are used; approve or reject",
        )
    if (
        decision.decision == "approve"
        and rule.separation_of_duties
        and any(_same_person(decision.reviewer, other, fold_identities)
                for other in (requester, draft_author))
    ):
        return refuse(
            "separation_of_duties", "the requester or the draft's author cannot approve it"
        )
    return Authorization(
        ok=True, message=f"{decision.decision} accepted", policy_version=snapshot.version
    )


def _same_person(reviewer: str, other: str | None, fold: bool) -> bool:
    # Case, padding, width, diacritics and look-alike letters or dashes must not turn one
    # person into two and slip past separation of duties (policies/normalise.identity_key).
    if other is None:
        return False
    if not fold:
        return reviewer.strip().casefold() == other.strip().casefold()
    return identity_key(reviewer) == identity_key(other)
