"""Tolerant parsing, strict meaning: every shape we have seen, and the ones we must refuse."""

from __future__ import annotations

import json

import pytest

from adapters.models.draft_parsing import (
    DraftSchemaError,
    ModelRefused,
    ToolCallInOutput,
    UnreadableOutput,
    parse_draft,
)

DRAFT = {"message": "Hi Lan, Miu's vaccination is due soon.", "source_refs": ["crm.first_name"]}
TEXT = json.dumps(DRAFT)

READABLE = {
    "object": TEXT,
    "draft_key": json.dumps({"draft": DRAFT}),
    "result_key": json.dumps({"result": DRAFT}),
    "nested_wrappers": json.dumps({"data": {"output": DRAFT}}),
    "unknown_single_wrapper": json.dumps({"reminder": DRAFT}),
    "json_fence": f"```json\n{TEXT}\n```",
    "bare_fence": f"```\n{TEXT}\n```",
    "fence_in_prose": f"Here is your draft:\n\n```json\n{TEXT}\n```\n\nAnything else?",
    "prose_around": f"Sure! {TEXT} Hope that helps.",
    "braces_in_prose_first": f"Use {{name}} style? No: {TEXT}",
    "other_object_first": f'Facts used: {{"count": 3}}. Draft: {TEXT}',
    "fence_then_prose_json": f"```\nnot json\n```\nFinal: {TEXT}",
    "one_element_array": json.dumps([DRAFT]),
    "double_encoded": json.dumps(TEXT),
    "string_under_wrapper": json.dumps({"result": TEXT}),
    "camel_case": json.dumps({"message": DRAFT["message"], "sourceRefs": ["crm.first_name"]}),
    "lone_ref_string": json.dumps({**DRAFT, "source_refs": "crm.first_name"}),
    "bom_and_whitespace": "\ufeff\n  " + TEXT + "\n\n",
}


@pytest.mark.parametrize("raw", READABLE.values(), ids=READABLE.keys())
def test_every_seen_shape_reads_to_the_same_draft(raw: str) -> None:
    draft = parse_draft(raw)

    assert draft.message == DRAFT["message"]
    assert draft.source_refs == ["crm.first_name"]


def test_readable_empty_answer_is_valid() -> None:
    draft = parse_draft('{"message": "", "source_refs": [], "unknowns": null, "reason": null}')

    assert (draft.message, draft.source_refs, draft.unknowns, draft.reason) == ("", [], [], "")


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        ("", "empty_output"),
        ("  \n\t ", "empty_output"),
        ("{}", "unreadable_output"),
        ("[]", "unreadable_output"),
        ('{"draft": {}}', "unreadable_output"),
        ("null", "unreadable_output"),
        ('"just a string"', "unreadable_output"),
        ("Hi Lan, Miu's vaccination is due on 1 December.", "unreadable_output"),
        (json.dumps([DRAFT, DRAFT]), "unreadable_output"),  # two drafts: which one?
        ('{"message": "Hi Lan, this is a remin', "truncated_output"),
        ('```json\n{"message": "Hi", "source_refs": ["crm.first_', "truncated_output"),
        ('Sure: {"draft": {"message": "Hi"}', "truncated_output"),
    ],
)
def test_unreadable_is_never_an_empty_success(raw: str, code: str) -> None:
    with pytest.raises(UnreadableOutput) as caught:
        parse_draft(raw)

    assert caught.value.code == code
    assert caught.value.retryable
    assert caught.value.raw == raw  # kept for the excerpt, not put in the message
    assert raw.strip() == "" or raw not in str(caught.value)


@pytest.mark.parametrize(
    "raw",
    [
        "I'm sorry, but I can't help with that.",
        "I cannot write messages that pressure customers.",
        '{"refusal": "I am unable to draft this message."}',
    ],
)
def test_refusal_is_readable_and_not_retried(raw: str) -> None:
    with pytest.raises(ModelRefused) as caught:
        parse_draft(raw)

    assert caught.value.code == "model_refused" and not caught.value.retryable


@pytest.mark.parametrize(
    "raw",
    [
        '{"tool_calls": [{"function": {"name": "send_sms", "arguments": "{}"}}]}',
        '{"function_call": {"name": "send_sms", "arguments": "{}"}}',
        '{"type": "tool_use", "name": "book_visit", "input": {}}',
        json.dumps({**DRAFT, "tool": "send_sms"}),
        json.dumps({"result": {"type": "function", "name": "charge_card"}}),
    ],
)
def test_tool_calls_in_the_json_are_security_incidents(raw: str) -> None:
    with pytest.raises(ToolCallInOutput) as caught:
        parse_draft(raw)

    assert caught.value.code == "tool_call" and not caught.value.retryable


@pytest.mark.parametrize(
    ("raw", "finding"),
    [
        (json.dumps({**DRAFT, "recipient": "+84 90 000 0000"}), "schema_invalid:recipient:extra"),
        (json.dumps({**DRAFT, "Send To!": "x"}), "schema_invalid:_:extra"),  # name withheld
        (json.dumps({"message": 42}), "schema_invalid:message:string_type"),
        (json.dumps({"message": "x" * 1001}), "schema_invalid:message:string_too_long"),
        (json.dumps({**DRAFT, "source_refs": [{"ref": 1}]}), "schema_invalid:source_refs.0:"),
    ],
)
def test_contract_breaks_are_findings_not_retries(raw: str, finding: str) -> None:
    with pytest.raises(DraftSchemaError) as caught:
        parse_draft(raw)

    assert any(f.startswith(finding) for f in caught.value.findings), caught.value.findings
    assert not caught.value.retryable
    assert "+84" not in " ".join(caught.value.findings)


@pytest.mark.parametrize(
    ("value", "expected"), [(0.7, 0.7), ("0.4", 0.4), (1.5, None), ("high", None), (None, None)]
)
def test_confidence_is_recorded_or_unknown_never_a_failure(value: object, expected: object) -> None:
    assert parse_draft(json.dumps({**DRAFT, "confidence": value})).confidence == expected

