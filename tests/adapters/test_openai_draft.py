"""The OpenAI provider, real SDK client, over loopback against recorded wire responses."""

from __future__ import annotations

import json
import time
import traceback
from collections.abc import Iterator

import pytest

from adapters.models.draft_parsing import ModelRefused, ToolCallInOutput, UnreadableOutput
from adapters.models.openai import OpenAIDraftProvider
from contracts.errors import RateLimited, RejectedError, RetryableError
from policies.prompts import build_prompt
from tests.adapters.fake_llm import (
    CHAT,
    FakeLLM,
    Reply,
    care_due_request,
    openai_chat,
    openai_error,
    openai_tool_call,
)
from tests.ports import free_port
from tollgate.config.models import DraftSettings
from tollgate.runtime.models import build_provider

KEY = "sk-test-DO-NOT-LEAK-0123456789abcdef"
DRAFT = {
    "message": "Hi Lan, Miu's vaccination is due on 1 December 2026. Reply to book a visit.",
    "source_refs": ["crm.first_name", "crm.pet_name", "event.due_at"],
    "unknowns": [],
    "reason": "Vaccination reminder from the due date.",
    "confidence": 0.82,
}


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


def provider(llm: FakeLLM, **kwargs: object) -> OpenAIDraftProvider:
    options: dict[str, object] = {"api_key": KEY, "model": "gpt-test", "timeout": 5.0}
    return OpenAIDraftProvider(base_url=llm.openai_base_url, **{**options, **kwargs})  # type: ignore[arg-type]


async def test_draft_comes_back_and_the_request_carries_the_strict_schema(llm: FakeLLM) -> None:
    llm.script(CHAT, Reply(body=openai_chat(json.dumps(DRAFT))))

    answer = await provider(llm).propose(build_prompt(care_due_request()))

    assert answer.draft.message == DRAFT["message"]
    assert answer.draft.source_refs == DRAFT["source_refs"]
    assert answer.draft.confidence == 0.82
    assert answer.model == "gpt-test-2026"  # what the server says it ran, not what we asked
    [sent] = llm.requests
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    fmt = sent.body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    schema = fmt["json_schema"]["schema"]
    assert schema["additionalProperties"] is False
    assert set(schema["required"]) == set(DRAFT)
    assert "tools" not in sent.body
    assert "<<<CONTEXT" in sent.body["messages"][1]["content"]


SHAPES = {
    "wrapped_draft": json.dumps({"draft": DRAFT}),
    "wrapped_result": json.dumps({"result": DRAFT}),
    "fenced_with_prose": "Here is the draft:\n```json\n" + json.dumps(DRAFT) + "\n```\nThanks!",
    "prose_around": "Sure. " + json.dumps(DRAFT) + " Let me know if you need changes.",
    "one_element_array": json.dumps([DRAFT]),
    "double_encoded": json.dumps({"output": json.dumps(DRAFT)}),
    "camel_case": json.dumps({"message": DRAFT["message"], "sourceRefs": DRAFT["source_refs"]}),
}


@pytest.mark.parametrize("content", SHAPES.values(), ids=SHAPES.keys())
async def test_real_world_shapes_are_read(llm: FakeLLM, content: str) -> None:
    llm.script(CHAT, Reply(body=openai_chat(content)))

    answer = await provider(llm).propose(build_prompt(care_due_request()))

    assert answer.draft.message == DRAFT["message"]
    assert answer.draft.source_refs == DRAFT["source_refs"]
    assert answer.raw == content  # kept verbatim for the reviewer's excerpt


async def test_readable_empty_answer_is_a_result_not_an_error(llm: FakeLLM) -> None:
    empty = {"message": "", "source_refs": [], "unknowns": ["event.due_at"], "reason": ""}
    llm.script(CHAT, Reply(body=openai_chat(json.dumps(empty))))

    answer = await provider(llm).propose(build_prompt(care_due_request()))

    assert answer.draft.message == ""
    assert answer.draft.unknowns == ["event.due_at"]


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (openai_chat(""), "empty_output"),
        (openai_chat(None), "empty_output"),
        (openai_chat("{}"), "unreadable_output"),
        (openai_chat("Hi Lan, Miu's vaccination is due soon."), "unreadable_output"),
        (openai_chat('{"message": "Hi Lan, Miu'), "truncated_output"),
        (openai_chat('{"message": "Hi Lan"', finish_reason="length"), "truncated_output"),
    ],
    ids=["empty", "null", "empty_object", "plain_prose", "cut_json", "finish_length"],
)
async def test_unreadable_answers_raise_retryable(llm: FakeLLM, body: dict, code: str) -> None:
    llm.script(CHAT, Reply(body=body))

    with pytest.raises(UnreadableOutput) as caught:
        await provider(llm).propose(build_prompt(care_due_request()))

    assert caught.value.code == code
    assert caught.value.retryable


async def test_refusal_is_readable_and_final(llm: FakeLLM) -> None:
    llm.script(CHAT, Reply(body=openai_chat(None, refusal="I can't help with that request.")))

    with pytest.raises(ModelRefused) as caught:
        await provider(llm).propose(build_prompt(care_due_request()))

    assert not caught.value.retryable
    assert caught.value.raw == "I can't help with that request."


async def test_tool_call_is_surfaced_without_its_arguments(llm: FakeLLM) -> None:
    call = openai_tool_call("send_sms", {"to": "+84901234567", "body": "pay now"})
    llm.script(CHAT, Reply(body=openai_chat(None, tool_calls=[call], finish_reason="tool_calls")))

    with pytest.raises(ToolCallInOutput) as caught:
        await provider(llm).propose(build_prompt(care_due_request()))

    assert caught.value.code == "tool_call"
    assert "send_sms" in caught.value.raw and "+84901234567" not in caught.value.raw


@pytest.mark.parametrize(
    ("headers", "delay"),
    [({"retry-after": "7"}, 7.0), ({"retry-after-ms": "1500"}, 1.5), ({}, 5.0)],
)
async def test_429_reads_retry_after_and_sdk_does_not_retry(
    llm: FakeLLM, headers: dict[str, str], delay: float
) -> None:
    reply = openai_error(429, "Rate limit reached", "rate_limit_exceeded")
    reply.headers.update(headers)
    llm.script(CHAT, reply)

    with pytest.raises(RateLimited) as caught:
        await provider(llm).propose(build_prompt(care_due_request()))

    assert caught.value.retry_after == delay
    assert len(llm.requests) == 1  # max_retries=0: Temporal owns the retry


@pytest.mark.parametrize("status", [500, 502, 503])
async def test_5xx_is_retryable_and_tried_once(llm: FakeLLM, status: int) -> None:
    llm.script(CHAT, openai_error(status))

    with pytest.raises(RetryableError) as caught:
        await provider(llm).propose(build_prompt(care_due_request()))

    assert caught.value.code == f"provider_{status}" and caught.value.retryable
    assert len(llm.requests) == 1


@pytest.mark.parametrize("status", [400, 401, 403, 404])
async def test_4xx_is_final_and_leaks_neither_key_nor_prompt(llm: FakeLLM, status: int) -> None:
    llm.script(CHAT, openai_error(status, f"Incorrect API key provided: {KEY}. Lan Miu"))

    with pytest.raises(RejectedError) as caught:
        await provider(llm).propose(build_prompt(care_due_request()))

    assert not caught.value.retryable
    # What a log line or Temporal's failure converter would print (both honour ``from None``).
    text = "".join(traceback.format_exception(caught.value))
    assert KEY not in text and "Lan" not in text and "Miu" not in text


async def test_hang_past_timeout_is_retryable(llm: FakeLLM) -> None:
    llm.script(CHAT, Reply(body=openai_chat(json.dumps(DRAFT)), delay=30))
    started = time.monotonic()

    with pytest.raises(RetryableError) as caught:
        await provider(llm, timeout=0.5).propose(build_prompt(care_due_request()))

    assert caught.value.code == "provider_timeout"
    assert time.monotonic() - started < 5


async def test_unreachable_endpoint_is_retryable() -> None:
    port = free_port()  # nobody listens there
    dead = OpenAIDraftProvider(api_key=KEY, model="m", base_url=f"http://127.0.0.1:{port}/v1")

    with pytest.raises(RetryableError) as caught:
        await dead.propose(build_prompt(care_due_request()))

    assert caught.value.code == "provider_unreachable"


async def test_compatible_mode_plain_json_and_content_parts(llm: FakeLLM) -> None:
    """Gemini-style endpoint: JSON mode without a schema, content as a list of text parts."""
    body = openai_chat(None, model="gemini-2.5-flash")
    body["choices"][0]["message"]["content"] = [{"type": "text", "text": json.dumps(DRAFT)}]
    llm.script(CHAT, Reply(body=body))

    gemini = provider(llm, compatible=True, json_mode="json_object", model="gemini-2.5-flash")
    answer = await gemini.propose(build_prompt(care_due_request()))

    assert gemini.name == "openai-compatible"
    assert answer.draft.message == DRAFT["message"]
    [sent] = llm.requests
    assert sent.body["response_format"] == {"type": "json_object"}
    assert sent.body["max_tokens"] > 0 and "max_completion_tokens" not in sent.body


async def test_factory_builds_openai_from_env_mapping_only(llm: FakeLLM) -> None:
    llm.script(CHAT, Reply(body=openai_chat(json.dumps(DRAFT))))
    env = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": llm.openai_base_url}

    settings = DraftSettings.from_env(env)
    answer = await build_provider(settings).propose(build_prompt(care_due_request()))

    assert settings.provider == "openai"
    assert KEY not in repr(settings) and KEY not in str(settings)
    assert answer.draft.message == DRAFT["message"]
    assert llm.requests[0].headers["authorization"] == f"Bearer {KEY}"


def test_factory_openai_compatible_needs_url_and_model() -> None:
    env = {"TOLLGATE_DRAFT_PROVIDER": "openai-compatible", "TOLLGATE_DRAFT_API_KEY": KEY}
    with pytest.raises(Exception, match="BASE_URL") as caught:
        DraftSettings.from_env(env)
    assert KEY not in str(caught.value)

    env |= {"TOLLGATE_DRAFT_BASE_URL": "http://127.0.0.1:1/v1", "TOLLGATE_DRAFT_MODEL": "g"}
    settings = DraftSettings.from_env(env | {"TOLLGATE_DRAFT_JSON_MODE": "json_object"})
    assert (settings.provider, settings.model, settings.json_mode) == (
        "openai-compatible",
        "g",
        "json_object",
    )
