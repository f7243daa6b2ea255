"""The offline drafter answers a reviewer's request-info note, or names it as an unknown."""

from __future__ import annotations

from adapters.models.offline import draft_offline
from contracts import DraftRequest, EventRef

CONTEXT = {"crm.first_name": "Lan", "crm.pet_name": "Miu", "crm.locale": "en",
           "event.reminder_kind": "vaccination", "event.due_at": "2026-12-10"}
REF = EventRef(tenant_id="acme", event_id="e-1", event_type="CARE_DUE", entity_id="C-1",
               workflow_id="event/acme/k-1", correlation_id="c-1", schema_version=3)


def request(note: str | None, version: int = 2) -> DraftRequest:
    return DraftRequest(ref=REF, context=CONTEXT, policy_version="2026-12-01.1",
                        prompt_version="p", version=version, reviewer_note=note)


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
