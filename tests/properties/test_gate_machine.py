"""The pure policy gate and reviewer authorisation under any order of deliveries, decisions,
timeouts and sends.

Hypothesis plays one customer's events through ``evaluate_gate`` and ``authorize_decision``
the way the event workflow does: a routed event opens a review; decisions from any reviewer,
role and tenant, for the current or an old request and draft version, arrive in any order; a
review may time out; an approved event re-checks the gate and sends. Whatever the order: only a
decision the rule allows is accepted, a closed review accepts nothing, request-info rounds stay
within the rule, nothing is sent without an accepted approval, each event sends at most once,
and the customer's daily limit holds.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from contracts import Draft, DraftResult, ReviewDecision
from policies.gate import authorize_decision, evaluate_gate
from policies.matrix import PolicyRule, PolicySnapshot

VERSION = "2026-12-01.1"
RULE = PolicyRule.model_validate({
    "approver_roles": ["care_lead", "reviewer"], "consent_required": True,
    "max_context_age": "P1D", "max_messages_per_customer_per_day": 2,
    "separation_of_duties": True, "review_sla": "PT4H", "review_deadline": "PT24H",
    "fallback_owner": "care-ops-oncall", "risk": "medium", "max_info_rounds": 1,
    "backlog_limit": 3, "adapter": "messaging", "action": "send_message",
})
SNAPSHOT = PolicySnapshot(version=VERSION, rule=RULE)
REVIEWERS = st.sampled_from(["an.tran", " AN.Tran ", "binh.le", "chi.pham"])
ROLES = st.sampled_from(["care_lead", " Care_Lead", "reviewer", "intern", "admin"])
TENANTS = st.sampled_from(["acme", "globex", None])
KINDS = st.sampled_from(["approve", "reject", "request_info"])


def drafted(status: str = "drafted") -> DraftResult:
    return DraftResult.model_validate({
        "status": status, "version": 1, "provider": "offline", "model": "offline-1",
        "prompt_version": "care.v1",
        "draft": Draft(message="Hi Lan, Milo's vaccination is due.", confidence=0.9)
        if status == "drafted" else None,
        "findings": ["injection: ignore previous"] if status == "failed_validation" else [],
    })


def same(a: str | None, b: str | None) -> bool:
    return a is not None and b is not None and a.strip().casefold() == b.strip().casefold()


@dataclass
class Event:
    """One event as the workflow holds it."""

    author: str | None
    state: str = "AWAITING_REVIEW"  # APPROVED, REJECTED, EXPIRED, STOPPED, SUCCEEDED
    request: int = 1
    version: int = 1
    info_rounds: int = 0
    approved_by: str | None = None
    sends: int = 0


class GateMachine(RuleBasedStateMachine):
    events = Bundle("events")

    def __init__(self) -> None:
        super().__init__()
        self.all: list[Event] = []
        self.sent_today = 0
        self.overdue = 0

    @rule(target=events, author=st.sampled_from([None, "an.tran", "binh.le"]))
    def deliver(self, author: str | None) -> Event:
        gate = evaluate_gate(SNAPSHOT, drafted(), sends_today=self.sent_today,
                             overdue_reviews=self.overdue)
        assert gate.policy_version == VERSION
        event = Event(author=author)
        if self.sent_today >= RULE.max_messages_per_customer_per_day:
            assert (gate.route, gate.reason_code) == ("stop", "daily_limit")
            event.state = "STOPPED"
        elif self.overdue >= RULE.backlog_limit:
            assert (gate.route, gate.reason_code) == ("hold", "review_backlog")
            event.state = "HELD"
        else:
            assert gate.route == "review" and gate.required_roles == RULE.approver_roles
        self.all.append(event)
        return event

    @rule(status=st.sampled_from(["failed_validation", "unreadable"]))
    def deliver_a_bad_draft(self, status: str) -> None:
        gate = evaluate_gate(SNAPSHOT, drafted(status), sends_today=self.sent_today,
                             overdue_reviews=self.overdue)
        if status == "failed_validation":
            assert gate.route == "stop"  # whatever the counts: never a review, never a send
        else:
            assert gate.route != "review" or gate.risk == "high"

    @rule(overdue=st.integers(min_value=0, max_value=5))
    def reviews_go_overdue(self, overdue: int) -> None:
        self.overdue = overdue

    @rule(event=events, reviewer=REVIEWERS, role=ROLES, tenant=TENANTS, kind=KINDS,
          current_request=st.booleans(), current_version=st.booleans())
    def decide(self, event: Event, reviewer: str, role: str, tenant: str | None, kind: str,
               current_request: bool, current_version: bool) -> None:
        decision = ReviewDecision(
            request_id=f"r{event.request if current_request else event.request - 1}",
            decision=kind, reviewer=reviewer, role=role, reason="r",  # type: ignore[arg-type]
            draft_version=event.version if current_version else event.version + 1)
        verdict = authorize_decision(
            SNAPSHOT, decision, tenant_id="acme", decision_tenant_id=tenant, requester=None,
            draft_author=event.author, expected_request_id=f"r{event.request}",
            current_draft_version=event.version, review_open=event.state == "AWAITING_REVIEW",
            info_rounds=event.info_rounds)
        assert verdict.policy_version == VERSION
        allowed = (
            tenant in (None, "acme") and event.state == "AWAITING_REVIEW" and current_request
            and current_version and role.strip().casefold() in RULE.approver_roles
            and not (kind == "request_info" and event.info_rounds >= RULE.max_info_rounds)
            and not (kind == "approve" and same(reviewer, event.author)))
        assert verdict.ok == allowed, verdict.message
        if not verdict.ok:
            return
        if kind == "approve":
            event.state, event.approved_by = "APPROVED", reviewer
        elif kind == "reject":
            event.state = "REJECTED"
        else:
            event.info_rounds += 1
            event.request += 1
            event.version += 1

    @rule(event=events)
    def review_times_out(self, event: Event) -> None:
        if event.state == "AWAITING_REVIEW":
            event.state = "EXPIRED"

    @precondition(lambda self: any(e.state == "APPROVED" for e in self.all))
    @rule(data=st.data())
    def send(self, data: st.DataObject) -> None:
        """The approved event re-checks the gate with today's sends, then sends once."""
        event = data.draw(st.sampled_from([e for e in self.all if e.state == "APPROVED"]))
        gate = evaluate_gate(SNAPSHOT, drafted(), sends_today=self.sent_today)
        if gate.route == "stop":
            event.state = "STOPPED"
            return
        event.sends += 1
        event.state = "SUCCEEDED"
        self.sent_today += 1

    @invariant()
    def nothing_sent_without_an_allowed_approval_and_never_twice(self) -> None:
        for event in self.all:
            assert event.sends <= 1
            if event.sends:
                assert event.approved_by is not None
                assert not same(event.approved_by, event.author)
            assert event.info_rounds <= RULE.max_info_rounds
        assert self.sent_today == sum(e.sends for e in self.all)
        assert self.sent_today <= RULE.max_messages_per_customer_per_day


def test_gate_state_machine() -> None:
    """Any order of deliveries, decisions, timeouts and sends keeps the gate's invariants."""
    run_state_machine_as_test(GateMachine, settings=settings(
        max_examples=150, stateful_step_count=30, deadline=None))
