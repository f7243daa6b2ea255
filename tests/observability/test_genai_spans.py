"""Model calls are GenAI client spans (issue 29 item 7): a draft through the real OpenAI and
Anthropic SDKs, against the wire-format server, leaves one ``chat`` span naming the provider,
the models and the token counts the server returned, and nothing of the prompt or the answer."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from temporalio.testing import ActivityEnvironment

from activities.draft import DraftActivities
from activities.tagging import TagModelActivities
from activities.triage import TriageActivities
from adapters.models.offline import OFFLINE_MODEL, OfflineDraftProvider
from adapters.models.openai import OpenAIDraftProvider
from contracts.errors import RateLimited
from policies.prompts import build_prompt
from tests.adapters.fake_llm import (
    CARE_CONTEXT,
    CHAT,
    MESSAGES,
    FakeLLM,
    Reply,
    anthropic_message,
    care_due_request,
    openai_chat,
    openai_error,
)
from tests.adapters.model_tags_support import PROMPT as TAG_PROMPT
from tests.adapters.model_tags_support import settings as tag_settings
from tests.adapters.model_triage_support import PROPOSAL
from tests.adapters.model_triage_support import request as triage_request
from tollgate.config.models import DraftSettings
from tollgate.runtime.models import build_provider, triage_provider
from tollgate.runtime.tag_models import build_tag_provider

KEY = "sk-test-genai-0123456789abcdef"
DRAFT = {
    "message": "Hi Lan, Miu's vaccination is due on 1 December 2026. Reply to book a visit.",
    "source_refs": ["crm.first_name", "crm.pet_name", "event.due_at"],
    "unknowns": [],
    "reason": "Vaccination reminder from the due date.",
    "confidence": 0.8,
}


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


def chat_span(spans: InMemorySpanExporter) -> ReadableSpan:
    [span] = [s for s in spans.get_finished_spans() if s.name.startswith("chat ")]
    return span


def assert_no_conversation(spans: InMemorySpanExporter) -> None:
    """Nothing a prompt or an answer holds, in any attribute or event of any span."""
    prompt = build_prompt(care_due_request())
    text = repr([(s.name, dict(s.attributes or {}), [dict(e.attributes or {}) for e in s.events])
                 for s in spans.get_finished_spans()])
    facts = [v for v in CARE_CONTEXT.values() if len(v) > 2]  # not the locale "en"
    for private in (*facts, DRAFT["message"], DRAFT["reason"], prompt.system[:60],
                    prompt.user[:60], "Miu", KEY):
        assert private not in text, private


def openai_settings(llm: FakeLLM, **env: str) -> DraftSettings:
    return DraftSettings.from_env({"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": llm.openai_base_url,
                                   **env})


async def draft(settings: DraftSettings) -> str:
    """One draft as the worker makes it: the built provider inside the draft activity."""
    activities = DraftActivities(build_provider(settings))
    result = await ActivityEnvironment().run(activities.draft_message, care_due_request())
    return result.status


async def test_an_openai_draft_is_a_chat_span_with_the_servers_model_and_token_counts(
    spans: InMemorySpanExporter, llm: FakeLLM,
) -> None:
    body = openai_chat(json.dumps(DRAFT), model="gpt-served-0601")
    body["usage"] = {"prompt_tokens": 1234, "completion_tokens": 56, "total_tokens": 1290}
    llm.script(CHAT, Reply(body=body))
    settings = openai_settings(llm, TOLLGATE_DRAFT_MODEL="gpt-asked")

    assert await draft(settings) == "drafted"

    span = chat_span(spans)
    assert span.name == "chat gpt-asked" and span.kind.name == "CLIENT"
    assert dict(span.attributes or {}) == {
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-asked", "gen_ai.response.model": "gpt-served-0601",
        "gen_ai.usage.input_tokens": 1234, "gen_ai.usage.output_tokens": 56,
        "server.address": "127.0.0.1", "server.port": llm.port,
    }
    assert_no_conversation(spans)


async def test_an_openai_compatible_endpoint_is_named_openai_beside_its_own_server(
    spans: InMemorySpanExporter, llm: FakeLLM,
) -> None:
    llm.script(CHAT, Reply(body=openai_chat(json.dumps(DRAFT), model="gemini-2.5-flash")))
    settings = DraftSettings.from_env({
        "TOLLGATE_DRAFT_PROVIDER": "openai-compatible", "TOLLGATE_DRAFT_API_KEY": KEY,
        "TOLLGATE_DRAFT_BASE_URL": llm.openai_base_url, "TOLLGATE_DRAFT_MODEL": "gemini-2.5-flash"})

    assert await draft(settings) == "drafted"

    attributes = dict(chat_span(spans).attributes or {})
    assert (attributes["gen_ai.provider.name"], attributes["server.address"],
            attributes["server.port"]) == ("openai", "127.0.0.1", llm.port)


async def test_an_anthropic_draft_counts_cached_input_tokens_as_input(
    spans: InMemorySpanExporter, llm: FakeLLM,
) -> None:
    body = anthropic_message(json.dumps(DRAFT), model="claude-served-0601")
    body["usage"] = {"input_tokens": 700, "output_tokens": 81,
                     "cache_read_input_tokens": 300, "cache_creation_input_tokens": 5}
    llm.script(MESSAGES, Reply(body=body))
    settings = DraftSettings.from_env({"ANTHROPIC_API_KEY": KEY,
                                       "ANTHROPIC_BASE_URL": llm.anthropic_base_url})

    assert await draft(settings) == "drafted"

    attributes = dict(chat_span(spans).attributes or {})
    assert attributes["gen_ai.provider.name"] == "anthropic"
    assert attributes["gen_ai.request.model"] == settings.model
    assert attributes["gen_ai.response.model"] == "claude-served-0601"
    assert (attributes["gen_ai.usage.input_tokens"],
            attributes["gen_ai.usage.output_tokens"]) == (700 + 300 + 5, 81)
    assert_no_conversation(spans)


async def test_a_failed_call_names_its_error_type_and_no_usage(
    spans: InMemorySpanExporter, llm: FakeLLM,
) -> None:
    llm.script(CHAT, openai_error(429, message="slow down, Lan's request was too long"))
    settings = openai_settings(llm)

    with pytest.raises(RateLimited):
        await build_provider(settings).propose(build_prompt(care_due_request()))

    span = chat_span(spans)
    attributes = dict(span.attributes or {})
    assert attributes["error.type"] == "provider_429"
    assert span.status.status_code == StatusCode.ERROR
    assert not [k for k in attributes if k.startswith("gen_ai.usage.")]
    assert "Lan" not in repr((attributes, span.status.description, span.events))


async def test_a_refusal_is_an_error_type_while_the_activity_ends_failed_validation(
    spans: InMemorySpanExporter, llm: FakeLLM,
) -> None:
    llm.script(CHAT, Reply(body=openai_chat(None, refusal="I can't help with Lan's pet.")))
    settings = openai_settings(llm)

    assert await draft(settings) == "failed_validation"

    assert dict(chat_span(spans).attributes or {})["error.type"] == "model_refused"
    assert_no_conversation(spans)


async def test_the_offline_drafter_reports_no_token_counts(
    spans: InMemorySpanExporter,
) -> None:
    assert await draft(DraftSettings.from_env({})) == "drafted"

    attributes = dict(chat_span(spans).attributes or {})
    assert attributes == {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "offline",
                          "gen_ai.request.model": OFFLINE_MODEL,
                          "gen_ai.response.model": OFFLINE_MODEL}
    assert_no_conversation(spans)


def test_tracing_off_builds_the_bare_adapter(llm: FakeLLM) -> None:
    assert type(build_provider(openai_settings(llm))) is OpenAIDraftProvider
    assert type(build_provider(DraftSettings.from_env({}))) is OfflineDraftProvider


async def test_an_openai_triage_is_a_chat_span_with_its_token_counts(
    spans: InMemorySpanExporter, llm: FakeLLM,
) -> None:
    body = openai_chat(json.dumps(PROPOSAL), model="gpt-served-0601")
    body["usage"] = {"prompt_tokens": 310, "completion_tokens": 22, "total_tokens": 332}
    llm.script(CHAT, Reply(body=body))
    triager = triage_provider(openai_settings(llm, TOLLGATE_DRAFT_MODEL="gpt-asked"))

    activities = TriageActivities(triager)
    result = await ActivityEnvironment().run(activities.triage_message, triage_request())

    assert result.status == "drafted"
    assert dict(chat_span(spans).attributes or {}) == {
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-asked", "gen_ai.response.model": "gpt-served-0601",
        "gen_ai.usage.input_tokens": 310, "gen_ai.usage.output_tokens": 22,
        "server.address": "127.0.0.1", "server.port": llm.port}
    text = repr([dict(s.attributes or {}) for s in spans.get_finished_spans()])
    for private in ("Lan", "charged twice", "O-19", PROPOSAL["reason"]):
        assert private not in text


async def test_an_offline_triage_is_traced_without_a_server_or_counts(
    spans: InMemorySpanExporter,
) -> None:
    triager = triage_provider(DraftSettings.from_env({}))

    await triager.triage(build_prompt(care_due_request()))

    attributes = dict(chat_span(spans).attributes or {})
    assert attributes["gen_ai.provider.name"] == "offline"
    assert not [k for k in attributes if k.startswith(("gen_ai.usage.", "server."))]


async def test_an_anthropic_tagging_call_is_a_chat_span_and_keeps_the_item_out(
    spans: InMemorySpanExporter, llm: FakeLLM,
) -> None:
    body = anthropic_message(json.dumps({"tags": [{"tag": "Figma", "confidence": 0.8}]}),
                             model="claude-served-0601")
    body["usage"] = {"input_tokens": 95, "output_tokens": 12}
    llm.script(MESSAGES, Reply(body=body))
    provider = build_tag_provider(tag_settings("anthropic", llm))

    await ActivityEnvironment().run(TagModelActivities(provider).suggest_tags, TAG_PROMPT)

    assert dict(chat_span(spans).attributes or {}) == {
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic",
        "gen_ai.request.model": "m-test", "gen_ai.response.model": "claude-served-0601",
        "gen_ai.usage.input_tokens": 95, "gen_ai.usage.output_tokens": 12,
        "server.address": "127.0.0.1", "server.port": llm.port}
    text = repr([dict(s.attributes or {}) for s in spans.get_finished_spans()])
    for private in (TAG_PROMPT.title, TAG_PROMPT.description, TAG_PROMPT.text, "example.com"):
        assert str(private) not in text


async def test_the_offline_tagger_is_traced_without_counts(
    spans: InMemorySpanExporter,
) -> None:
    provider = build_tag_provider(DraftSettings.from_env({}))

    await provider.suggest_tags(TAG_PROMPT)

    attributes = dict(chat_span(spans).attributes or {})
    assert attributes["gen_ai.provider.name"] == "offline"
    assert not [k for k in attributes if k.startswith(("gen_ai.usage.", "server."))]
