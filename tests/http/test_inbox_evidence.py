"""The inbox's review page shows evidence: values with origin, the route, the diff, the flags."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from contracts import Draft, EventState, Flag, ReviewTicket
from policies.evidence import cited_evidence, review_route
from policies.matrix import load_matrix
from tollgate.http.inbox import _pages
from tollgate.http.review_evidence import evidence_fields

READ = datetime(2026, 12, 3, 9, 0, tzinfo=UTC)
OLD = "Hi Lan, Miu's vaccination is due on 10 December 2026."
NEW = OLD + " The date is 10 December 2026."


def page(shown: str = "AWAITING_REVIEW", **ticket_fields: object) -> str:
    rule = load_matrix().rule_for("acme", "CARE_DUE").rule
    draft = Draft(message=NEW, source_refs=["crm.first_name", "crm.phone", "event.due_at"],
                  unknowns=["reviewer asked: “which clinic?” (no context fact answers it)"])
    ticket = ReviewTicket(
        workflow_id="event/acme/k-1", state=EventState.AWAITING_REVIEW, request_id="r-1",
        draft_version=2, draft=draft, context_fields=draft.source_refs, required_roles=["x"],
        risk="low", policy_version="2026-12-01.1", review_deadline=READ + timedelta(days=1),
        review_due_at=READ + timedelta(hours=4),
        flags=[Flag(finding="foreign_pii:phone", rule="phone_not_allowed",
                    source="draft.message", span="0912 345 678")],
        evidence=cited_evidence(draft.source_refs, {"crm.first_name": "Lan",
                                                    "crm.phone": "0912 345 678",
                                                    "event.due_at": "2026-12-10"},
                                fetched_at=READ, source_updated_at=READ - timedelta(hours=2),
                                max_age=rule.max_context_age, event_source="crm-scheduler"),
        route=review_route(rule, reason_code=None, sends_today=0, info_rounds=1,
                           escalated=False),
        **ticket_fields)
    detail = {"workflow_id": ticket.workflow_id, "state": shown, "draft": NEW,
              "draft_version": 2, "request_id": "r-1", "sources": draft.source_refs,
              "unknowns": draft.unknowns, "review_due_at": ticket.review_due_at,
              "review_deadline": ticket.review_deadline, "decisions": [],
              **evidence_fields(ticket, {}, NEW)}
    return _pages.env.get_template("review.html").render(r=detail, csrf="c", who=None)


def test_each_fact_shows_its_value_origin_and_freshness_masked_by_policy() -> None:
    html = page()
    assert "crm.first_name</strong> = “Lan”" in html
    assert "CRM customer record · field first_name · read 2026-12-03 09:00 UTC" in html
    assert "fresh: updated 2h before it was read" in html
    assert "event from crm-scheduler" in html
    assert "0912 345 678" not in html.split('id="evidence"')[1].split("</ul>")[0]
    assert "••• 678" in html and "(masked)" in html
    assert "reviewer asked: “which clinic?”" in html


def test_the_page_says_the_deadline_who_is_next_and_what_the_rule_leaves() -> None:
    html = page()
    assert "SLA 2026-12-03 13:00 UTC" in html and "expires 2026-12-04 09:00 UTC" in html
    assert '<strong id="fallback">care-ops-oncall</strong>' in html
    assert "Sends left today " in html and "questions left 1" in html
    assert "foreign_pii:phone · rule phone_not_allowed · from draft.message" in html


def test_a_finished_review_names_nobody_next_at_the_sla() -> None:
    # The page a decision redirects to, once the send went: the route's rule stays.
    html = page("SUCCEEDED")
    assert 'id="fallback"' not in html and "Next: at the SLA" not in html, html
    assert "Rule messaging.send_message" in html


def test_a_new_version_shows_its_word_diff_and_the_question_it_answers() -> None:
    html = page(previous_version=1, previous_message=OLD, answering="When is it due?")
    assert "Changes from v1" in html and "You asked: “When is it due?”" in html
    assert "<ins>The date is 10 December 2026.</ins>" in html
    assert "Changes from" not in page()
