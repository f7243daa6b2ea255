"""The policy gate: context checks, routing a draft, and who may decide a review."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from contracts import CustomerRecord, Draft, DraftResult, ReviewDecision
from policies.gate import Authorization, authorize_decision, check_context, evaluate_gate
from policies.matrix import PolicyRule, PolicySnapshot

NOW = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
VERSION = "2026-11-30.7"


def _rule(**change: Any) -> PolicyRule:
    base: dict[str, Any] = {
        "approver_roles": ["care_lead", "reviewer"],
        "consent_required": True,
        "max_context_age": "P1D",
        "max_messages_per_customer_per_day": 2,
        "separation_of_duties": True,
        "review_sla": "PT4H",
        "review_deadline": "PT24H",
        "fallback_owner": "care-ops-oncall",
        "risk": "medium",
        "max_info_rounds": 1,
        "backlog_limit": 3,
        "adapter": "messaging",
        "action": "send_message",
    }
    return PolicyRule.model_validate({**base, **change})


def _snapshot(**change: Any) -> PolicySnapshot:
    return PolicySnapshot(version=VERSION, rule=_rule(**change))


def _record(*, consent: bool = True, age: timedelta = timedelta(hours=1)) -> CustomerRecord:
    return CustomerRecord(
        tenant_id="acme",
        customer_id="c-1",
        first_name="Lan",
        consent_messaging=consent,
        updated_at=NOW - age,
    )


def _draft(status: str = "drafted", confidence: float | None = 0.9, **kw: Any) -> DraftResult:
    draft = Draft(message="Hi Lan, Milo's vaccination is due.", confidence=confidence)
    return DraftResult.model_validate(
        {
            "status": status,
            "version": 1,
            "draft": draft if status == "drafted" else None,
            "provider": "offline",
            "model": "offline-1",
            "prompt_version": "care.v1",
            **kw,
        }
    )


# --- check_context -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("record", "reason"),
    [
        (None, "missing_source"),
        (_record(consent=False), "no_consent"),
        (_record(age=timedelta(days=1, seconds=1)), "stale_context"),
        # Revoked and stale: the revoked consent is what the audit must say.
        (_record(consent=False, age=timedelta(days=30)), "no_consent"),
    ],
)
def test_context_that_must_stop_the_event(record: CustomerRecord | None, reason: str) -> None:
    verdict = check_context(_rule(), record, NOW)
    assert not verdict.ok and verdict.reason_code == reason
    assert "Lan" not in verdict.message


@pytest.mark.parametrize(
    "age", [timedelta(0), timedelta(days=1), timedelta(minutes=-5)], ids=["new", "limit", "future"]
)
def test_fresh_consented_context_passes(age: timedelta) -> None:
    verdict = check_context(_rule(), _record(age=age), NOW)
    assert verdict.ok and verdict.reason_code is None


def test_consent_is_only_demanded_where_the_rule_requires_it() -> None:
    assert check_context(_rule(consent_required=False), _record(consent=False), NOW).ok


def test_context_age_uses_the_rule_limit() -> None:
    record = _record(age=timedelta(days=3))
    assert not check_context(_rule(max_context_age="P2D"), record, NOW).ok
    assert check_context(_rule(max_context_age="P1W"), record, NOW).ok


def test_a_naive_now_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        check_context(_rule(), _record(), NOW.replace(tzinfo=None))


# --- evaluate_gate -------------------------------------------------------------------------


def test_a_good_draft_goes_to_review_with_the_rule_terms() -> None:
    decision = evaluate_gate(_snapshot(), _draft())
    assert decision.route == "review" and decision.reason_code is None
    assert decision.required_roles == ("care_lead", "reviewer")
    assert decision.risk == "medium"
    assert decision.review_sla == timedelta(hours=4)
    assert decision.review_deadline == timedelta(hours=24)
    assert decision.fallback_owner == "care-ops-oncall"
    assert decision.policy_version == VERSION


@pytest.mark.parametrize(
    ("findings", "reason"),
    [
        (["unknown_source_ref: crm.email"], "unknown_source_ref"),
        (["injection_marker"], "injection_marker"),
        (["the draft cites a field it was not given"], "failed_validation"),
        ([], "failed_validation"),
    ],
)
def test_a_draft_that_failed_validation_stops(findings: list[str], reason: str) -> None:
    decision = evaluate_gate(_snapshot(), _draft("failed_validation", findings=findings))
    assert (decision.route, decision.reason_code) == ("stop", reason)


def test_an_unreadable_draft_still_reaches_a_human_as_high_risk() -> None:
    unreadable = _draft("unreadable", raw_excerpt="{'msg': 'Hi")
    decision = evaluate_gate(_snapshot(risk="low"), unreadable)
    assert (decision.route, decision.risk, decision.reason_code) == (
        "review",
        "high",
        "unreadable_draft",
    )


def test_a_drafted_result_without_a_draft_stops() -> None:
    broken = _draft().model_copy(update={"draft": None})
    assert evaluate_gate(_snapshot(), broken).route == "stop"


@pytest.mark.parametrize(
    ("sent", "route"), [(0, "review"), (1, "review"), (2, "stop"), (5, "stop")]
)
def test_the_daily_limit_per_customer(sent: int, route: str) -> None:
    decision = evaluate_gate(
        _snapshot(max_messages_per_customer_per_day=2), _draft(), sends_today=sent
    )
    assert decision.route == route
    assert decision.reason_code == ("daily_limit" if route == "stop" else None)


@pytest.mark.parametrize(
    ("overdue", "route"), [(0, "review"), (2, "review"), (3, "hold"), (9, "hold")]
)
def test_the_backlog_guard_holds_new_events_at_the_gate(overdue: int, route: str) -> None:
    decision = evaluate_gate(_snapshot(backlog_limit=3), _draft(), overdue_reviews=overdue)
    assert decision.route == route
    assert decision.reason_code == ("review_backlog" if route == "hold" else None)


def test_a_stop_is_final_even_when_the_backlog_would_hold() -> None:
    over = {"overdue_reviews": 99}
    assert evaluate_gate(_snapshot(), _draft("failed_validation"), **over).route == "stop"
    assert evaluate_gate(_snapshot(), _draft(), sends_today=2, **over).reason_code == "daily_limit"
    assert evaluate_gate(_snapshot(), _draft("unreadable"), sends_today=2).route == "stop"


@pytest.mark.parametrize(
    "case",
    [{}, {"sends_today": 2}, {"overdue_reviews": 3}],
    ids=["review", "stop", "hold"],
)
def test_confidence_never_changes_the_decision(case: dict[str, int]) -> None:
    decisions = {
        evaluate_gate(_snapshot(), _draft(confidence=c), **case)
        for c in (None, 0.0, 0.01, 0.5, 0.99, 1.0)
    }
    assert len(decisions) == 1
    certain_but_invalid = _draft("failed_validation").model_copy(
        update={"draft": _draft(confidence=1.0).draft}
    )
    assert evaluate_gate(_snapshot(), certain_but_invalid, **case).route == "stop"


def test_every_route_is_stamped_with_the_policy_version() -> None:
    cases: list[dict[str, int]] = [{}, {"sends_today": 9}, {"overdue_reviews": 9}]
    decisions = [evaluate_gate(_snapshot(), _draft(), **case) for case in cases]
    assert [d.route for d in decisions] == ["review", "stop", "hold"]
    assert {d.policy_version for d in decisions} == {VERSION}


def test_negative_counts_are_a_programming_error() -> None:
    with pytest.raises(ValueError, match="negative"):
        evaluate_gate(_snapshot(), _draft(), sends_today=-1)


# --- authorize_decision --------------------------------------------------------------------


def _decision(kind: str = "approve", **change: Any) -> ReviewDecision:
    base = {
        "request_id": "req-1",
        "decision": kind,
        "reviewer": "bao.tran",
        "role": "reviewer",
        "reason": "reads well",
        "draft_version": 2,
    }
    return ReviewDecision.model_validate({**base, **change})


def _authorize(
    decision: ReviewDecision, snapshot: PolicySnapshot | None = None, **change: Any
) -> Authorization:
    context: dict[str, Any] = {
        "tenant_id": "acme",
        "decision_tenant_id": "acme",
        "requester": "scheduler-user",
        "draft_author": "minh.le",
        "expected_request_id": "req-1",
        "current_draft_version": 2,
        "review_open": True,
    }
    return authorize_decision(snapshot or _snapshot(), decision, **{**context, **change})


@pytest.mark.parametrize("kind", ["approve", "reject", "request_info"])
def test_an_allowed_reviewer_may_decide(kind: str) -> None:
    result = _authorize(_decision(kind, role="care_lead"))
    assert result.ok and result.reason_code is None and result.policy_version == VERSION


@pytest.mark.parametrize(
    ("decision", "change", "reason"),
    [
        (_decision(), {"review_open": False}, "review_closed"),
        (_decision(request_id="req-0"), {}, "wrong_request"),
        (_decision(), {"expected_request_id": None}, "wrong_request"),
        (_decision(draft_version=1), {}, "stale_draft_version"),
        (_decision(), {"current_draft_version": None}, "stale_draft_version"),
        (_decision(role="intern"), {}, "role_not_allowed"),
        (_decision("reject", role="intern"), {}, "role_not_allowed"),
        (_decision("request_info", role="intern"), {}, "role_not_allowed"),
        (_decision(reviewer="scheduler-user"), {}, "separation_of_duties"),
        (_decision(reviewer=" Minh.Le "), {}, "separation_of_duties"),
        (_decision(), {"decision_tenant_id": "globex"}, "cross_tenant"),
        # A reviewer from another tenant is an incident even when the review is over.
        (_decision(), {"decision_tenant_id": "globex", "review_open": False}, "cross_tenant"),
        (_decision("request_info"), {"info_rounds": 1}, "info_rounds_exhausted"),
    ],
)
def test_refused_decisions(decision: ReviewDecision, change: dict[str, Any], reason: str) -> None:
    result = _authorize(decision, **change)
    assert not result.ok and result.reason_code == reason
    assert result.policy_version == VERSION
    for person in ("bao.tran", "scheduler-user", "minh", "Minh"):
        assert person not in result.message


@pytest.mark.parametrize("kind", ["reject", "request_info"])
def test_the_author_may_still_reject_or_ask_for_information(kind: str) -> None:
    assert _authorize(_decision(kind, reviewer="minh.le")).ok


def test_separation_of_duties_only_binds_where_the_rule_sets_it() -> None:
    lenient = _snapshot(separation_of_duties=False)
    assert _authorize(_decision(reviewer="minh.le"), lenient).ok


def test_roles_come_from_the_tenant_rule() -> None:
    leads_only = _snapshot(approver_roles=["care_lead"])
    assert _authorize(_decision(role="reviewer"), leads_only).reason_code == "role_not_allowed"
    assert _authorize(_decision(role="care_lead"), leads_only).ok


def test_a_channel_without_a_tenant_is_scoped_by_the_workflow_alone() -> None:
    assert _authorize(_decision(), decision_tenant_id=None).ok


def test_no_system_requester_or_model_author_blocks_nobody() -> None:
    assert _authorize(_decision(), requester=None, draft_author=None).ok
