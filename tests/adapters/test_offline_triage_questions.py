"""The reviewer's questions on a triage event: the offline triage answers every one of the
review so far, oldest first, or names it as unknown; the prompt a model gets lists them all.
Through the triage activity, so the validator passes on what a reviewer would see."""

from __future__ import annotations

import json

from temporalio.testing import ActivityEnvironment

from activities.triage import TriageActivities
from adapters.models.offline_triage import OfflineTriageProvider
from contracts import DraftRequest, DraftResult, EventRef
from policies.matrix import load_matrix
from policies.triage_prompt import TRIAGE_PROMPT_VERSION, build_triage_prompt

CONTEXT = {
    "crm.first_name": "Lan", "crm.locale": "en", "event.channel": "chat",
    "event.thread_id": "T-881", "event.body": "Miu has been vomiting since last night.",
}


def request(*notes: str, **context: str) -> DraftRequest:
    snapshot = load_matrix().rule_for("acme", "MESSAGE_RECEIVED")
    assert snapshot is not None
    ref = EventRef(workflow_id="event/acme/m-1", tenant_id="acme", event_id="evt-m-1",
                   event_type="MESSAGE_RECEIVED", entity_id="C-1001", correlation_id="c-1",
                   schema_version=1)
    return DraftRequest(ref=ref, context={**CONTEXT, **context},
                        policy_version=snapshot.version, prompt_version=TRIAGE_PROMPT_VERSION,
                        version=len(notes) + 1, reviewer_note=notes[-1] if notes else None,
                        reviewer_notes=notes, rule=snapshot.rule)


async def triage(req: DraftRequest) -> DraftResult:
    return await ActivityEnvironment().run(
        TriageActivities(OfflineTriageProvider()).triage_message, req)


async def test_two_questions_one_answered_from_the_facts_one_named_unknown() -> None:
    result = await triage(request("Which team gets this?", "Is this urgent?"))

    assert result.status == "drafted", result.findings
    assert result.draft is not None and result.triage is not None
    assert "It goes to medical_team as a medical question" in result.draft.reason
    assert result.draft.unknowns == [
        "reviewer_question: reviewer asked: \u201cIs this urgent?\u201d"
        " (no context fact answers it)"]
    # The assignment itself is the same as without questions: the answers are for the reviewer.
    assert json.loads(result.draft.message)["queue"] == "medical_team"


async def test_the_earlier_question_keeps_its_answer_when_a_later_one_is_asked() -> None:
    v2 = await triage(request("What is the customer's name?"))
    v3 = await triage(request("What is the customer's name?", "Which channel did it come by?"))

    assert v2.draft is not None and v3.draft is not None
    name = "The record's first name is Lan (crm.first_name)."
    assert name in v2.draft.reason and name in v3.draft.reason
    assert "The message's channel is chat (event.channel)." in v3.draft.reason
    assert v3.draft.reason.index(name) < v3.draft.reason.index("channel is chat")
    assert v3.draft.unknowns == []


async def test_a_fact_asked_twice_is_said_once_and_each_open_question_is_listed() -> None:
    result = await triage(request("Who sent it?", "What is the sender's name?",
                                  "What is the order number?", "Price?"))

    assert result.status == "drafted", result.findings
    assert result.draft is not None
    assert result.draft.reason.count("first name is Lan") == 1
    # No order number in the event: that question is open, as is the price.
    assert [u.split("\u201c")[1].split("\u201d")[0] for u in result.draft.unknowns] == [
        "What is the order number?", "Price?"]


async def test_an_older_request_with_only_the_latest_note_is_still_answered() -> None:
    old = request().model_copy(update={"reviewer_note": "Is this urgent?", "version": 2})
    result = await triage(old)

    assert result.draft is not None
    assert any("Is this urgent?" in u for u in result.draft.unknowns)


async def test_every_open_question_is_named_even_past_the_lists_room() -> None:
    # A refund with no order number already has one missing field; ten open questions follow.
    asked = tuple(f"Question {n}: is it insured?" for n in range(1, 11))
    result = await triage(request(*asked, **{"event.body": "I want a refund please."}))

    assert result.status == "drafted", result.findings
    assert result.draft is not None
    assert len(result.draft.unknowns) == 10
    assert result.draft.unknowns[0].startswith("order_id")
    assert "Question 8:" in result.draft.unknowns[-2]
    assert result.draft.unknowns[-1].endswith("reviewer asked 2 more questions no context fact"
                                              " answers")


def test_the_prompt_lists_every_question_oldest_first() -> None:
    prompt = build_triage_prompt(request("Which team gets this?", "Is this urgent?"))

    assert prompt.prompt_version == TRIAGE_PROMPT_VERSION == "triage-v2"
    block = prompt.user.split("<<<REVIEWER_NOTE")[1].split("REVIEWER_NOTE>>>")[0]
    assert json.loads(block[block.index("["):]) == ["Which team gets this?", "Is this urgent?"]
    assert "reviewer_question" in prompt.user
    assert "REVIEWER_NOTE" not in build_triage_prompt(request()).user
