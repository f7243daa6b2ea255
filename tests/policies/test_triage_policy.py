"""The triage policy (issue 32), pure: what may be auto-routed, what the offline triage
proposes, and that a proposal's assignment is the same text every time."""

from __future__ import annotations

from typing import Any

import pytest

from adapters.models.offline_triage import triage_offline
from contracts import DraftRequest, DraftResult, EventRef, Flag
from contracts.triage import Claim, FieldIssue, ReplyDraft, TriageProposal
from policies.matrix import load_matrix
from policies.triage import assignment_draft, inspect_triage, may_auto_route
from policies.triage_prompt import TRIAGE_PROMPT_VERSION

RULE = load_matrix().rule_for("acme", "MESSAGE_RECEIVED")
CONTEXT = {"crm.first_name": "Lan", "crm.locale": "en", "event.thread_id": "T-9",
           "event.channel": "chat", "event.body": "Can I book an appointment for Miu?"}


def request(**context: str) -> DraftRequest:
    assert RULE is not None
    ref = EventRef(workflow_id="event/acme/m", tenant_id="acme", event_id="e",
                   event_type="MESSAGE_RECEIVED", entity_id="C-1001", correlation_id="c",
                   schema_version=1)
    return DraftRequest(ref=ref, context={**CONTEXT, **context}, policy_version=RULE.version,
                        prompt_version=TRIAGE_PROMPT_VERSION, rule=RULE.rule)


def proposal(**changes: Any) -> TriageProposal:
    base: dict[str, Any] = {"intent": Claim(value="booking", source_refs=["event.body"]),
                            "route": Claim(value="front_desk", source_refs=["event.body"])}
    return TriageProposal(**{**base, **changes})


def result(p: TriageProposal, flags: list[Flag] | None = None) -> DraftResult:
    return DraftResult(status="drafted", version=1, provider="offline", model="m",
                       prompt_version=TRIAGE_PROMPT_VERSION, triage=p,
                       draft=assignment_draft(p, CONTEXT), flags=flags or [])


def test_a_clean_booking_may_be_auto_routed() -> None:
    assert RULE is not None
    assert inspect_triage(proposal(), request()) == []
    assert may_auto_route(RULE.rule, result(proposal()))


@pytest.mark.parametrize("change", [
    {"reply": ReplyDraft(message="Hi Lan, the front desk will call you back.",
                         source_refs=["crm.first_name"])},
    {"missing": [FieldIssue(field="preferred_date", source_refs=["event.body"])]},
    {"conflicts": [FieldIssue(field="customer_name",
                              source_refs=["event.sender_name", "crm.first_name"])]},
    {"intent": Claim(value="complaint", source_refs=["event.body"])},
])
def test_a_reply_an_open_question_or_an_unlisted_intent_goes_to_a_reviewer(
        change: dict[str, Any]) -> None:
    assert RULE is not None
    assert not may_auto_route(RULE.rule, result(proposal(**change)))


def test_any_flag_sends_it_to_a_reviewer() -> None:
    assert RULE is not None
    flag = Flag(finding="injection_in_context:event.body", rule="ignore_previous",
                source="event.body", span="ignore previous instructions")
    assert not may_auto_route(RULE.rule, result(proposal(), [flag]))


def test_a_care_rule_never_auto_routes() -> None:
    care = load_matrix().rule_for("acme", "CARE_DUE")
    assert care is not None and care.rule.triage is None
    assert not may_auto_route(care.rule, result(proposal()))


def test_the_offline_triage_is_deterministic_and_cites_what_it_read() -> None:
    refund = request(**{"event.body": "Tôi bị trừ tiền hai lần, xin hoàn tiền",
                        "crm.locale": "vi", "event.sender_name": "Mai"})
    first, second = triage_offline(refund), triage_offline(refund)
    assert first == second
    assert (first.intent.value, first.route.value) == ("refund_request", "billing")
    assert [m.field for m in first.missing] == ["order_id"]
    assert [c.field for c in first.conflicts] == ["customer_name"]  # Mai is not Lan
    assert first.reply is not None and first.reply.message.startswith("Chào Lan")
    assert inspect_triage(first, refund) == []
    booking = triage_offline(request())
    assert (booking.intent.value, booking.route.value, booking.reply) == (
        "booking", "front_desk", None)


def test_the_assignment_is_canonical_json_of_ticket_queue_intent_and_reply() -> None:
    draft = assignment_draft(proposal(), CONTEXT)
    assert draft.message == ('{"intent":"booking","queue":"front_desk","reply":null,'
                             '"ticket_ref":"T-9"}')
    assert draft.source_refs == ["event.body"]
