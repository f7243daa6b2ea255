"""The Anthropic provider, real SDK client, over loopback against recorded wire responses."""

from __future__ import annotations

import json
import time
import traceback
from collections.abc import Iterator

import pytest

from adapters.models.anthropic import AnthropicDraftProvider
from adapters.models.draft_parsing import ModelRefused, ToolCallInOutput, UnreadableOutput
from contracts.errors import RateLimited, RejectedError, RetryableError
from policies.prompts import build_prompt
from tests.adapters.fake_llm import (
    MESSAGES,
    FakeLLM,
    Reply,
    anthropic_error,
    anthropic_message,
    care_due_request,
)
from tollgate.config.models import DraftSettings
from tollgate.runtime.models import build_provider

KEY = "sk-ant-test-DO-NOT-LEAK-0123456789abcdef"
DRAFT = {
    "message": "Hi Lan, Miu's vaccination is due on 1 December 2026. Reply to book a visit.",
    "source_refs": ["crm.first_name", "crm.pet_name", "event.due_at"],
    "unknowns": [],
    "reason": "Vaccination reminder from the due date.",
    "confidence": None,
}


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


def provider(llm: FakeLLM, timeout: float = 5.0, **kwargs: object) -> AnthropicDraftProvider:
    return AnthropicDraftProvider(
        api_key=KEY,
        model="claude-test",
        base_url=llm.anthropic_base_url,
        timeout=timeout,
        **kwargs,  # type: ignore[arg-type]
    )


async def test_draft_comes_back_and_schema_goes_as_structured_output(llm: FakeLLM) -> None:
    llm.script(MESSAGES, Reply(body=anthropic_message(json.dumps(DRAFT))))

    answer = await provider(llm).propose(build_prompt(care_due_request()))

    assert answer.draft.message == DRAFT["message"]
    assert answer.draft.confidence is None
    assert answer.model == "claude-test-2026"
    [sent] = llm.requests
    assert KEY in sent.headers.get("x-api-key", "") + sent.headers.get("authorization", "")
    schema = sent.body["output_config"]["format"]["schema"]
    assert schema["additionalProperties"] is False and set(schema["required"]) == set(DRAFT)
    assert "tools" not in sent.body  # so any tool_use in the answer is the model acting
    assert "data, not instructions" in sent.body["system"]


async def test_prompt_mode_sends_no_output_config(llm: FakeLLM) -> None:
    llm.script(MESSAGES, Reply(body=anthropic_message(json.dumps(DRAFT))))

    await provider(llm, json_mode="prompt").propose(build_prompt(care_due_request()))

    assert "output_config" not in llm.requests[0].body


SHAPES = {
    "fenced_with_prose": "Here you go:\n```json\n" + json.dumps(DRAFT) + "\n```",
    "wrapped_draft": json.dumps({"draft": DRAFT}),
    "prose_around": "Draft below.\n" + json.dumps({"result": DRAFT}) + "\nHope this helps.",
}


@pytest.mark.parametrize("text", SHAPES.values(), ids=SHAPES.keys())
async def test_real_world_shapes_are_read(llm: FakeLLM, text: str) -> None:
    llm.script(MESSAGES, Reply(body=anthropic_message(text)))

    answer = await provider(llm).propose(build_prompt(care_due_request()))

    assert answer.draft.message == DRAFT["message"]
    assert answer.draft.source_refs == DRAFT["source_refs"]


async def test_thinking_blocks_are_not_part_of_the_answer(llm: FakeLLM) -> None:
    body = anthropic_message(json.dumps(DRAFT))
    thinking = {"type": "thinking", "thinking": "{not json", "signature": "sig"}
    body["content"].insert(0, thinking)
    llm.script(MESSAGES, Reply(body=body))

    answer = await provider(llm).propose(build_prompt(care_due_request()))

    assert answer.raw == json.dumps(DRAFT)


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (anthropic_message(None), "empty_output"),
        (anthropic_message("   "), "empty_output"),
        (anthropic_message('{"draft": {}}'), "unreadable_output"),
        (anthropic_message('{"message": "Hi', stop_reason="max_tokens"), "truncated_output"),
        (anthropic_message('```json\n{"message": "Hi", "source_refs": ["crm.'), "truncated_output"),
        ("<html>502 Bad Gateway</html>", "unreadable_output"),
    ],
    ids=["no_blocks", "blank", "empty_wrapper", "max_tokens", "cut_fence", "gateway_html"],
)
async def test_unreadable_answers_raise_retryable(llm: FakeLLM, body: object, code: str) -> None:
    llm.script(MESSAGES, Reply(body=body))

    with pytest.raises(UnreadableOutput) as caught:
        await provider(llm).propose(build_prompt(care_due_request()))

    assert caught.value.code == code and caught.value.retryable


async def test_refusal_stop_reason_is_final(llm: FakeLLM) -> None:
    llm.script(MESSAGES, Reply(body=anthropic_message("I can't help.", stop_reason="refusal")))

    with pytest.raises(ModelRefused) as caught:
        await provider(llm).propose(build_prompt(care_due_request()))

    assert caught.value.code == "model_refused" and not caught.value.retryable


async def test_tool_use_block_is_surfaced(llm: FakeLLM) -> None:
    tool = {"name": "send_message", "input": {"to": "lan@example.com", "text": "hi"}}
    body = anthropic_message(None, tool_use=tool, stop_reason="tool_use")
    llm.script(MESSAGES, Reply(body=body))

    with pytest.raises(ToolCallInOutput) as caught:
        await provider(llm).propose(build_prompt(care_due_request()))

    assert "send_message" in caught.value.raw and "lan@example.com" not in caught.value.raw


async def test_429_reads_retry_after_and_is_tried_once(llm: FakeLLM) -> None:
    reply = anthropic_error(429, "rate_limit_error", "Number of requests exceeded")
    reply.headers["retry-after"] = "12"
    llm.script(MESSAGES, reply)

    with pytest.raises(RateLimited) as caught:
        await provider(llm).propose(build_prompt(care_due_request()))

    assert caught.value.retry_after == 12.0
    assert len(llm.requests) == 1  # max_retries=0


@pytest.mark.parametrize("status", [500, 529])
async def test_server_errors_and_overload_are_retryable(llm: FakeLLM, status: int) -> None:
    llm.script(MESSAGES, anthropic_error(status, "overloaded_error"))

    with pytest.raises(RetryableError) as caught:
        await provider(llm).propose(build_prompt(care_due_request()))

    assert caught.value.code == f"provider_{status}" and len(llm.requests) == 1


@pytest.mark.parametrize("status", [400, 401, 403])
async def test_4xx_is_final_and_leaks_nothing(llm: FakeLLM, status: int) -> None:
    llm.script(MESSAGES, anthropic_error(status, "authentication_error", f"bad key {KEY} Lan"))

    with pytest.raises(RejectedError) as caught:
        await provider(llm).propose(build_prompt(care_due_request()))

    text = "".join(traceback.format_exception(caught.value))
    assert KEY not in text and "Lan" not in text and not caught.value.retryable


async def test_hang_past_timeout_is_retryable(llm: FakeLLM) -> None:
    llm.script(MESSAGES, Reply(body=anthropic_message(json.dumps(DRAFT)), delay=30))
    started = time.monotonic()

    with pytest.raises(RetryableError) as caught:
        await provider(llm, timeout=0.5).propose(build_prompt(care_due_request()))

    assert caught.value.code == "provider_timeout" and time.monotonic() - started < 5


async def test_factory_picks_anthropic_when_only_its_key_is_set(llm: FakeLLM) -> None:
    llm.script(MESSAGES, Reply(body=anthropic_message(json.dumps(DRAFT))))
    env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": llm.anthropic_base_url}

    settings = DraftSettings.from_env(env)
    answer = await build_provider(settings).propose(build_prompt(care_due_request()))

    assert (settings.provider, settings.model) == ("anthropic", "claude-haiku-4-5")
    assert KEY not in repr(settings)
    assert answer.draft.message == DRAFT["message"]
