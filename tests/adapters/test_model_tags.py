"""Tagging through the real ``openai`` and ``anthropic`` SDKs against the wire-format server:
the providers the settings build, the four answer shapes read by the activity, at most five
tags, the 0.45 floor, unreadable -> a retryable failure (never an empty success), an empty list
-> a valid result, and the call cut at 20 s whatever the drafting timeout says."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.tagging import TagModelActivities
from adapters.ports.models import TagProvider
from contracts.tagging import TagSuggestions
from tests.adapters.fake_llm import (
    CHAT,
    MESSAGES,
    FakeLLM,
    Reply,
    anthropic_error,
    anthropic_message,
    openai_chat,
    openai_error,
    openai_tool_call,
)
from tests.adapters.model_tags_support import KEY, PROMPT, settings
from tollgate.config.models import ModelSettings
from tollgate.runtime.tag_models import build_tag_provider


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


#: vendor -> (route, wrap the answer's text in that vendor's response body, an error reply)
VENDORS: dict[str, tuple[str, Callable[[str], dict[str, Any]], Callable[[int], Reply]]] = {
    "openai": (CHAT, openai_chat, lambda s: openai_error(s)),
    "openai-compatible": (CHAT, openai_chat, lambda s: openai_error(s)),
    "anthropic": (MESSAGES, anthropic_message, lambda s: anthropic_error(s)),
}


async def suggest(provider: TagProvider) -> TagSuggestions:
    out: TagSuggestions = await ActivityEnvironment().run(
        TagModelActivities(provider).suggest_tags, PROMPT)
    return out


SHAPES = {
    "objects_with_tag": {"tags": [{"tag": "Data visualization", "confidence": 0.9},
                                  {"tag": "Figma", "confidence": 0.6}]},
    "objects_with_label": [{"label": "Data visualization", "score": 0.9},
                           {"label": "Figma", "score": 0.6}],
    "strings_and_confidences": {"tags": ["Data visualization", "Figma"],
                                "confidence": [0.9, 0.6]},
}


@pytest.mark.parametrize("vendor", VENDORS)
@pytest.mark.parametrize("shape", SHAPES)
async def test_each_shape_comes_back_through_the_sdk(llm: FakeLLM, vendor: str,
                                                     shape: str) -> None:
    route, wrap, _ = VENDORS[vendor]
    llm.script(route, Reply(body=wrap(json.dumps(SHAPES[shape]))))
    out = await suggest(build_tag_provider(settings(vendor, llm)))
    assert [(s.tag, s.confidence) for s in out.suggestions] == [
        ("Data visualization", 0.9), ("Figma", 0.6)]
    [sent] = llm.requests
    body = json.dumps(sent.body)
    assert "Data visualization dashboards in Figma" in body and "UI design" in body
    # The page cannot close its data block: the marker inside it arrives defused.
    assert body.count("ITEM>>>") == 2  # the system message names it, the block closes once


@pytest.mark.parametrize("vendor", VENDORS)
async def test_a_bare_array_gets_the_floor_and_at_most_five_are_kept(llm: FakeLLM,
                                                                    vendor: str) -> None:
    route, wrap, _ = VENDORS[vendor]
    names = ["charts", "dashboards", "Figma", "design", "colour", "data", "reporting"]
    llm.script(route, Reply(body=wrap(json.dumps(names))))
    out = await suggest(build_tag_provider(settings(vendor, llm)))
    assert [s.tag for s in out.suggestions] == names[:5]
    assert {s.confidence for s in out.suggestions} == {0.45}


@pytest.mark.parametrize("vendor", VENDORS)
async def test_an_empty_list_is_a_valid_answer(llm: FakeLLM, vendor: str) -> None:
    route, wrap, _ = VENDORS[vendor]
    llm.script(route, Reply(body=wrap('{"tags": []}')))
    out = await suggest(build_tag_provider(settings(vendor, llm)))
    assert out.suggestions == [] and out.model


UNREADABLE = {"empty_object": "{}", "prose": "These look like charts to me.", "nothing": "",
              "tags_not_a_list": '{"tags": "Figma"}'}


@pytest.mark.parametrize("vendor", VENDORS)
@pytest.mark.parametrize("answer", UNREADABLE)
async def test_unreadable_is_a_retryable_failure(llm: FakeLLM, vendor: str,
                                                 answer: str) -> None:
    route, wrap, _ = VENDORS[vendor]
    llm.script(route, Reply(body=wrap(UNREADABLE[answer])))
    with pytest.raises(ApplicationError) as caught:
        await suggest(build_tag_provider(settings(vendor, llm)))
    assert caught.value.type == "retryable" and not caught.value.non_retryable


async def test_tool_calls_and_cut_off_answers_are_not_answers(llm: FakeLLM) -> None:
    call = openai_tool_call("delete_tags", {"all": True})
    llm.script(CHAT, Reply(body=openai_chat(None, tool_calls=[call])),
               Reply(body=openai_chat('{"tags": ["Fig', finish_reason="length")))
    llm.script(MESSAGES, Reply(body=anthropic_message(
        tool_use={"name": "delete_tags", "input": {}}, stop_reason="tool_use")))
    for vendor in ("openai", "openai", "anthropic"):
        with pytest.raises(ApplicationError) as caught:
            await suggest(build_tag_provider(settings(vendor, llm)))
        assert caught.value.type == "retryable"


@pytest.mark.parametrize("vendor", VENDORS)
@pytest.mark.parametrize(("status", "kind", "final"), [
    (503, "retryable", False), (429, "rate_limited", False), (401, "rejected", True)])
async def test_provider_errors_map_to_the_taxonomy_without_the_key(
        llm: FakeLLM, vendor: str, status: int, kind: str, final: bool) -> None:
    route, _, error = VENDORS[vendor]
    llm.script(route, error(status))
    with pytest.raises(ApplicationError) as caught:
        await suggest(build_tag_provider(settings(vendor, llm)))
    assert (caught.value.type, caught.value.non_retryable) == (kind, final)
    assert KEY not in str(caught.value) and KEY not in repr(caught.value.details)


@pytest.mark.parametrize("vendor", VENDORS)
async def test_a_model_that_hangs_is_cut_and_retried(llm: FakeLLM, vendor: str) -> None:
    route, wrap, _ = VENDORS[vendor]
    llm.script(route, Reply(body=wrap('{"tags": []}'), delay=5))
    with pytest.raises(ApplicationError) as caught:
        await suggest(build_tag_provider(settings(vendor, llm, TOLLGATE_DRAFT_TIMEOUT="0.3")))
    assert caught.value.type == "retryable" and "timeout" in str(caught.value)


@pytest.mark.parametrize("vendor", VENDORS)
def test_the_call_is_cut_at_twenty_seconds_whatever_drafting_allows(llm: FakeLLM,
                                                                    vendor: str) -> None:
    provider = build_tag_provider(settings(vendor, llm, TOLLGATE_DRAFT_TIMEOUT="120"))
    assert provider._client.timeout == 20.0  # type: ignore[attr-defined]
    assert provider.name == vendor and provider.model == "m-test"


def test_offline_settings_build_the_offline_tagger() -> None:
    provider = build_tag_provider(ModelSettings.from_env({}).draft())
    assert provider.name == "offline"


@pytest.mark.parametrize(("vendor", "mode", "expect"), [
    ("openai", "json_schema", ("max_completion_tokens", "json_schema")),
    ("openai-compatible", "json_object", ("max_tokens", "json_object")),
    ("openai-compatible", "prompt", ("max_tokens", None)),
    ("anthropic", "json_schema", ("max_tokens", "output_config")),
    ("anthropic", "prompt", ("max_tokens", None)),
])
async def test_the_request_asks_for_the_tag_schema_as_the_settings_say(
        llm: FakeLLM, vendor: str, mode: str, expect: tuple[str, str | None]) -> None:
    route, wrap, _ = VENDORS[vendor]
    llm.script(route, Reply(body=wrap('{"tags": []}')))
    provider = build_tag_provider(settings(vendor, llm, TOLLGATE_DRAFT_JSON_MODE=mode))
    await provider.suggest_tags(PROMPT)
    [sent] = llm.requests
    limit, structured = expect
    assert limit in sent.body
    if structured == "output_config":
        assert sent.body["output_config"]["format"]["schema"]["required"] == ["tags"]
    elif structured is None:
        assert "response_format" not in sent.body and "output_config" not in sent.body
    else:
        assert sent.body["response_format"]["type"] == structured
        if structured == "json_schema":
            assert sent.body["response_format"]["json_schema"]["strict"] is True
