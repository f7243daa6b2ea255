"""Property tests over who may decide a review (``policies.gate.authorize_decision``), with no
Temporal and no database: any stream of decisions, from anyone, in any order, keeps the rules.

The state machine plays an open review as the workflow's review desk uses the gate: the first
accepted approve or reject closes it, an accepted request-info makes a new draft version and a
new request. Hypothesis looks for a sequence that breaks an invariant."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from contracts import ReviewDecision
from policies.gate import authorize_decision
from policies.matrix import PolicyRule, PolicySnapshot

RULE: dict[str, Any] = {
    "approver_roles": ["care_lead", "reviewer"], "consent_required": True,
    "max_context_age": "P1D", "max_messages_per_customer_per_day": 2,
    "separation_of_duties": True, "review_sla": "PT4H", "review_deadline": "PT24H",
    "fallback_owner": "care-ops-oncall", "risk": "medium", "max_info_rounds": 2,
    "backlog_limit": 3, "adapter": "messaging", "action": "send_message",
}
SNAPSHOT = PolicySnapshot(version="2026-11-30.9", rule=PolicyRule.model_validate(RULE))
REQUESTER, AUTHOR = "crm-scheduler", "offline"

people = st.sampled_from(["an.tran", "lan.nguyen", "CRM-Scheduler ", "offline", "kim"])
roles = st.sampled_from(["care_lead", "reviewer", "Care_Lead", "intern", "admin"])
tenants = st.sampled_from([None, "acme", "globex"])
kinds = st.sampled_from(["approve", "reject", "request_info"])


# Weighted towards the valid value, so that most examples reach the later checks.
@settings(max_examples=500, deadline=None)
@given(reviewer=people, role=roles, tenant=tenants, kind=kinds,
       version=st.sampled_from([2, 2, 2, 1, 3]), request=st.sampled_from(["r-1", "r-1", "r-2"]),
       open_=st.sampled_from([True, True, True, False]), rounds=st.integers(0, 3))
def test_an_accepted_decision_meets_every_rule(
    reviewer: str, role: str, tenant: str | None, kind: str, version: int, request: str,
    open_: bool, rounds: int,
) -> None:
    decision = ReviewDecision(request_id=request, decision=kind, reviewer=reviewer, role=role,
                              reason="r", draft_version=version, tenant_id=tenant)
    verdict = authorize_decision(
        SNAPSHOT, decision, tenant_id="acme", decision_tenant_id=tenant, requester=REQUESTER,
        draft_author=AUTHOR, expected_request_id="r-1", current_draft_version=2,
        review_open=open_, info_rounds=rounds)
    if tenant not in (None, "acme"):
        assert verdict.reason_code == "cross_tenant"  # whatever else is wrong with it
    if not verdict.ok:
        return
    assert open_ and request == "r-1" and version == 2
    assert role.strip().casefold() in SNAPSHOT.rule.approver_roles
    if kind == "approve":
        assert reviewer.strip().casefold() not in (REQUESTER, AUTHOR)
    if kind == "request_info":
        assert rounds < SNAPSHOT.rule.max_info_rounds


class OpenReview(RuleBasedStateMachine):
    """One event's review, decided by a crowd."""

    def __init__(self) -> None:
        super().__init__()
        self.version, self.request, self.rounds = 1, 1, 0
        self.open = True
        self.closing: list[str] = []  # accepted approve/reject decisions
        self.approved_versions: list[int] = []
        self.approvers: list[str] = []

    @rule(reviewer=people, role=roles, tenant=tenants, kind=kinds,
          version_lag=st.sampled_from([0, 0, 0, 1, 2]), request_lag=st.sampled_from([0, 0, 1]))
    def decide(self, reviewer: str, role: str, tenant: str | None, kind: str,
               version_lag: int, request_lag: int) -> None:
        decision = ReviewDecision(
            request_id=f"r-{self.request - request_lag}", decision=kind,
            reviewer=reviewer, role=role, reason="r",
            draft_version=max(self.version - version_lag, 1), tenant_id=tenant)
        verdict = authorize_decision(
            SNAPSHOT, decision, tenant_id="acme", decision_tenant_id=tenant,
            requester=REQUESTER, draft_author=AUTHOR, expected_request_id=f"r-{self.request}",
            current_draft_version=self.version, review_open=self.open,
            info_rounds=self.rounds)
        if not verdict.ok:
            return
        if kind == "request_info":
            self.version, self.request, self.rounds = self.version + 1, self.request + 1, \
                self.rounds + 1
            return
        self.closing.append(kind)
        self.open = False
        if kind == "approve":
            self.approved_versions.append(decision.draft_version)
            self.approvers.append(reviewer)

    @precondition(lambda self: not self.open)
    @rule()
    def a_late_decision_changes_nothing(self) -> None:
        late = ReviewDecision(request_id=f"r-{self.request}", decision="approve",
                              reviewer="an.tran", role="care_lead", reason="late",
                              draft_version=self.version)
        verdict = authorize_decision(
            SNAPSHOT, late, tenant_id="acme", decision_tenant_id="acme", requester=REQUESTER,
            draft_author=AUTHOR, expected_request_id=f"r-{self.request}",
            current_draft_version=self.version, review_open=False, info_rounds=self.rounds)
        assert verdict.reason_code == "review_closed"

    @invariant()
    def one_closing_decision_at_most(self) -> None:
        assert len(self.closing) <= 1

    @invariant()
    def only_the_shown_draft_is_ever_approved(self) -> None:
        assert all(v == self.version for v in self.approved_versions)

    @invariant()
    def neither_the_requester_nor_the_author_approves(self) -> None:
        assert all(p.strip().casefold() not in (REQUESTER, AUTHOR) for p in self.approvers)

    @invariant()
    def request_info_rounds_stay_within_the_policy(self) -> None:
        assert self.rounds <= SNAPSHOT.rule.max_info_rounds


TestOpenReview = OpenReview.TestCase
TestOpenReview.settings = settings(max_examples=150, stateful_step_count=25, deadline=None)
