"""Triage through the OpenAI and Anthropic providers (issue 32): the real SDK clients over
loopback against the wire-format server (tests/adapters/fake_llm.py), then the triage activity's
validator on what they return."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from temporalio.testing import ActivityEnvironment

from activities.triage import TriageActivities
from adapters.models.anthropic import AnthropicDraftProvider
from adapters.models.draft_parsing import ToolCallInOutput
from adapters.models.openai import OpenAIDraftProvider
from adapters.ports.models import TriageProvider
from contracts import DraftRequest, DraftResult
from contracts.errors import RateLimited
from contracts.triage import Assignment
from policies.triage_prompt import build_triage_prompt
from tests.adapters.fake_llm import (
    CHAT,
    MESSAGES,
    FakeLLM,
    Reply,
    anthropic_error,
    anthropic_message,
    openai_chat,
    openai_tool_call,
)
from tests.adapters.model_triage_support import CONTEXT, PROPOSAL, request

KEY = "sk-test-DO-NOT-LEAK-0123456789abcdef"


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


def openai(llm: FakeLLM) -> OpenAIDraftProvider:
    return OpenAIDraftProvider(api_key=KEY, model="gpt-test", base_url=llm.openai_base_url,
                               timeout=5.0)


def claude(llm: FakeLLM) -> AnthropicDraftProvider:
    return AnthropicDraftProvider(api_key=KEY, model="claude-test",
                                  base_url=llm.anthropic_base_url, timeout=5.0)


async def triage(provider: TriageProvider, req: DraftRequest) -> DraftResult:
    return await ActivityEnvironment().run(TriageActivities(provider).triage_message, req)


async def test_openai_triage_sends_the_strict_schema_and_the_lists_and_reads_the_answer(
        llm: FakeLLM) -> None:
    llm.script(CHAT, Reply(body=openai_chat(json.dumps(PROPOSAL))))

    answer = await openai(llm).triage(build_triage_prompt(request()))

    assert answer.proposal.route.value == "billing"
    assert answer.proposal.reply is not None and answer.proposal.reply.message.startswith("Hi")
    assert answer.model == "gpt-test-2026" and answer.usage is not None
    [sent] = llm.requests
    schema = sent.body["response_format"]["json_schema"]
    assert (schema["name"], schema["strict"]) == ("triage", True)
    assert set(schema["schema"]["required"]) == set(PROPOSAL)
    user = sent.body["messages"][1]["content"]
    assert 'ALLOWED_ROUTES: ["front_desk", "billing", "medical_team", "care_team"]' in user


async def test_anthropic_triage_reads_an_answer_in_prose_with_camel_case_keys(
        llm: FakeLLM) -> None:
    camel = {**PROPOSAL, "reply": {"message": PROPOSAL["reply"]["message"],
                                   "sourceRefs": ["crm.first_name"]}}
    llm.script(MESSAGES, Reply(body=anthropic_message(
        "Here is the triage:\n```json\n" + json.dumps(camel) + "\n```")))

    answer = await claude(llm).triage(build_triage_prompt(request()))

    assert answer.proposal.intent.value == "refund_request"
    assert answer.proposal.reply is not None
    assert answer.proposal.reply.source_refs == ["crm.first_name"]
    [sent] = llm.requests
    assert sent.body["output_config"]["format"]["schema"]["required"]


async def test_a_clean_proposal_becomes_the_assignment_a_reviewer_approves(llm: FakeLLM) -> None:
    llm.script(CHAT, Reply(body=openai_chat(json.dumps(PROPOSAL))))

    result = await triage(openai(llm), request())

    assert result.status == "drafted", result.findings
    assert result.draft is not None
    assignment = Assignment.model_validate_json(result.draft.message)
    assert (assignment.ticket_ref, assignment.queue) == ("T-881", "billing")
    assert assignment.reply == PROPOSAL["reply"]["message"]
    assert result.provider == "openai"


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_a_route_off_the_tenants_list_is_refused(llm: FakeLLM, provider: str) -> None:
    # globex's list has no billing queue (policies/versions/2026-12-02.json).
    body = json.dumps(PROPOSAL)
    if provider == "openai":
        llm.script(CHAT, Reply(body=openai_chat(body)))
        result = await triage(openai(llm), request("globex"))
    else:
        llm.script(MESSAGES, Reply(body=anthropic_message(body)))
        result = await triage(claude(llm), request("globex"))

    assert result.status == "failed_validation"
    assert result.findings == ["route_not_allowed"]
    assert result.draft is None and result.triage is None


@pytest.mark.parametrize(("change", "finding"), [
    ({"route": {"value": "front_desk", "source_refs": ["crm.secret_notes"]}},
     "unknown_source_ref:crm.secret_notes"),
    ({"intent": {"value": "refund_request", "source_refs": []}},
     "claim_without_source:intent"),
    ({"reply": {"message": "Hi Lan, pay here: https://evil.example/pay",
                "source_refs": ["crm.first_name"]}}, "link_not_allowed"),
    ({"reply": {"message": "Hi Lan, call Mai at +84 90 111 2222 about it.",
                "source_refs": ["crm.first_name"]}}, "foreign_pii:phone"),
    ({"intent": {"value": "legal_threat", "source_refs": ["event.body"]}},
     "intent_not_allowed"),
])
async def test_the_validator_refuses_unknown_refs_and_replies_that_break_the_output_policy(
        llm: FakeLLM, change: dict[str, Any], finding: str) -> None:
    llm.script(CHAT, Reply(body=openai_chat(json.dumps({**PROPOSAL, **change}))))

    result = await triage(openai(llm), request())

    assert result.status == "failed_validation"
    assert finding in result.findings
    assert result.draft is None and result.triage is None  # nothing a reviewer could approve
    if "reply" in change:  # the reviewer of the dead record sees where the rule matched
        assert any(f.source == "triage.reply" for f in result.flags), result.flags


async def test_a_tool_call_is_not_a_triage(llm: FakeLLM) -> None:
    llm.script(CHAT, Reply(body=openai_chat(
        None, tool_calls=[openai_tool_call("assign_ticket", {"queue": "billing"})],
        finish_reason="tool_calls")))
    with pytest.raises(ToolCallInOutput):
        await openai(llm).triage(build_triage_prompt(request()))


async def test_a_429_is_rate_limited_with_the_servers_delay(llm: FakeLLM) -> None:
    error = anthropic_error(429, "rate_limit_error")
    error.headers = {"retry-after": "7"}
    llm.script(MESSAGES, error)
    with pytest.raises(RateLimited) as raised:
        await claude(llm).triage(build_triage_prompt(request()))
    assert raised.value.retry_after == 7.0
    assert KEY not in str(raised.value)


async def test_the_ticket_id_reaches_the_assignment_but_never_the_model(llm: FakeLLM) -> None:
    # A producer's long conversation id reads like a token to the secret rules; it is the
    # system's identifier (held to the id pattern by the schema), so it is not a fact to scan.
    thread = "T-conversation_8f3a9c2e71b44d0f9e2a_reconciled"
    llm.script(CHAT, Reply(body=openai_chat(json.dumps(PROPOSAL))))
    req = request().model_copy(update={"context": {**CONTEXT, "event.thread_id": thread}})

    result = await triage(openai(llm), req)

    assert result.status == "drafted", result.findings
    assert result.draft is not None
    assert Assignment.model_validate_json(result.draft.message).ticket_ref == thread
    [sent] = llm.requests
    assert thread not in json.dumps(sent.body)
