"""The inbox's review page spells out a triage proposal's assignment (docs/triage.md): the
ticket, the queue, the intent and the reply the reviewer is about to let through."""

from __future__ import annotations

from typing import Any

from contracts.triage import Assignment
from tollgate.http.inbox import _pages
from tollgate.http.review_service import _assignment


def page(message: str) -> str:
    detail: dict[str, Any] = {
        "workflow_id": "event/acme/msg-1", "state": "AWAITING_REVIEW", "draft": message,
        "assignment": _assignment(message), "draft_version": 1, "request_id": "r-1",
        "sources": ["event.body"], "unknowns": [], "decisions": []}
    return _pages.env.get_template("review.html").render(r=detail, csrf="c", who=None)


def test_an_assignment_reads_as_what_will_happen_with_its_reply_escaped() -> None:
    html = page(Assignment(ticket_ref="T-0931", queue="billing", intent="refund_request",
                           reply="Hi Lan, <b>our billing team</b> will look into it.").body())
    assert "Assign ticket <strong>T-0931</strong> to <strong id=\"queue\">billing</strong>" in html
    assert "(intent refund_request)" in html
    assert "Hi Lan, &lt;b&gt;our billing team&lt;/b&gt; will look into it." in html
    assert '"ticket_ref"' not in html  # not the JSON


def test_no_reply_says_none_and_a_reminder_shows_as_written() -> None:
    assert '<span id="reply">none</span>' in page(
        Assignment(ticket_ref="T-1", queue="front_desk", intent="booking").body())
    reminder = page("Hi Lan, Miu's vaccination is due on 1 December 2030.")
    assert "Miu&#39;s vaccination is due" in reminder and "Assign ticket" not in reminder
