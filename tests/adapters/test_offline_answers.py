"""The offline drafter answers a reviewer's request-info note, or names it as an unknown."""

from __future__ import annotations

from adapters.models.offline import draft_offline
from contracts import DraftRequest, EventRef

CONTEXT = {"crm.first_name": "Lan", "crm.pet_name": "Miu", "crm.locale": "en",
           "event.reminder_kind": "vaccination", "event.due_at": "2026-12-10"}
REF = EventRef(tenant_id="acme", event_id="e-1", event_type="CARE_DUE", entity_id="C-1",
               workflow_id="event/acme/k-1", correlation_id="c-1", schema_version=3)


def request(note: str | None, version: int = 2, *asked: str) -> DraftRequest:
    return DraftRequest(ref=REF, context=CONTEXT, policy_version="2026-12-01.1",
                        prompt_version="p", version=version, reviewer_note=note,
                        reviewer_notes=asked)


def test_a_question_the_facts_answer_changes_the_message() -> None:
    first = draft_offline(request(None, version=1))
    second = draft_offline(request("When exactly is it due?"))
    assert second.message != first.message
    assert second.message.startswith(first.message)
    assert "The date is 10 December 2026." in second.message
    assert "event.due_at" in second.source_refs and not second.unknowns


def test_a_question_no_fact_answers_is_named_as_an_unknown() -> None:
    first = draft_offline(request(None, version=1))
    second = draft_offline(request("which clinic?"))
    assert second.unknowns == ["reviewer asked: \u201cwhich clinic?\u201d (no context fact "
                               "answers it)"]
    assert "clinic" not in second.message.lower()  # never made up, never copied in
    assert first.message == second.message and second.reason != first.reason


def test_a_real_model_is_told_to_answer_the_note_or_name_it() -> None:
    from policies.prompts import NOTE_OPEN, build_prompt

    user = build_prompt(request("which clinic?")).user
    assert '"which clinic?"' in user.split(NOTE_OPEN, 1)[1]
    assert 'add "reviewer asked: <their question>" to "unknowns"' in user


def test_a_second_question_keeps_the_first_answer_and_adds_its_own() -> None:
    v2 = draft_offline(request("When is it due?", 2, "When is it due?"))
    v3 = draft_offline(request("Which pet is it for?", 3, "When is it due?",
                               "Which pet is it for?"))
    assert v3.message.startswith(v2.message)  # nothing v2 told the reviewer is dropped
    assert v3.message.endswith("The date is 10 December 2026. "
                               "This reminder is about Miu's care.")
    assert not v3.unknowns
    assert v3.reason == "Version 3 answers the reviewer's 2 questions from the facts."


def test_each_question_is_answered_or_named_in_order_and_a_fact_is_said_once() -> None:
    asked = ("which clinic?", "When is it due?", "what price?", "And the date again?")
    draft = draft_offline(request(asked[-1], 5, *asked))
    assert draft.message.count("The date is 10 December 2026.") == 1
    assert draft.unknowns == [
        "reviewer asked: \u201cwhich clinic?\u201d (no context fact answers it)",
        "reviewer asked: \u201cwhat price?\u201d (no context fact answers it)",
    ]
    assert "clinic" not in draft.message.lower() and "price" not in draft.message.lower()
    assert draft.reason == ("Version 5 answers 2 of the reviewer's 4 questions from the facts; "
                            "the rest are listed as unknown.")


def test_a_model_is_handed_every_question_oldest_first() -> None:
    import json

    from policies.prompts import NOTE_CLOSE, NOTE_OPEN, build_prompt

    prompt = build_prompt(request("Which pet?", 3, "When is it due?", "Which pet?"))
    block = prompt.user.split(NOTE_OPEN, 1)[1].split(NOTE_CLOSE, 1)[0]
    assert json.loads(block.split("\n", 1)[1]) == ["When is it due?", "Which pet?"]
    assert "Answer every question" in prompt.user
    assert prompt.prompt_version == "care-reminder-v4"


def test_a_request_from_before_with_only_the_latest_note_still_gets_its_answer() -> None:
    old = DraftRequest.model_validate_json(
        request("When is it due?").model_dump_json(exclude={"reviewer_notes"}))
    assert old.questions() == ("When is it due?",)
    assert "The date is 10 December 2026." in draft_offline(old).message
