"""Incident postmortems through the OpenAI and Anthropic providers (issue 32 item 2, ADR 0046):
the real SDK clients over loopback against the wire-format server (tests/adapters/fake_llm.py),
then the postmortem validator on what they return; and `tollgate ops incident` refusing, with
nothing kept, a model's draft that states a figure the packet does not hold."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from adapters.models.anthropic import AnthropicDraftProvider
from adapters.models.draft_parsing import ToolCallInOutput
from adapters.models.offline_postmortem import OfflinePostmortemProvider
from adapters.models.openai import OpenAIDraftProvider
from adapters.postgres.ops import OpsStore
from contracts.errors import RateLimited
from policies.incident_packet import build_packet
from policies.postmortem import validate_postmortem
from policies.postmortem_prompt import build_postmortem_prompt
from tests.adapters.fake_llm import (
    CHAT,
    MESSAGES,
    FakeLLM,
    Reply,
    anthropic_message,
    openai_chat,
    openai_tool_call,
)
from tests.cli.helpers import run_ops
from tests.conftest import TEST_KEYS_FILE
from tests.policies.incident_rows import SINCE, UNTIL, rows
from tollgate.config.settings import Settings
from tollgate.runtime.exits import Exit
from tollgate.runtime.models import postmortem_provider

KEY = "sk-test-DO-NOT-LEAK-0123456789abcdef"
PACKET = build_packet(rows(), since=SINCE, until=UNTIL, tenant="acme")
DRAFT: dict[str, Any] = {
    "impact": [{"text": "2 unknown writes answered target_504.", "refs": ["code:target_504"]}],
    "timeline": [{"text": "The circuit closed messaging for acme after 2 signals.",
                  "refs": ["cc:7"]}],
    "suspectedCause": [{"text": "The 504s came under policies 2026-12-02.1 and 2026-12-01.",
                        "refs": ["ver:target_504|2026-12-02.1|care-reminder-v3",
                                 "ver:target_504|2026-12-01|care-reminder-v3"]}],
    "open_items": [{"text": "Dead letter 12 waits for a person.", "refs": "dl:12"}],
}


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


def openai(llm: FakeLLM) -> OpenAIDraftProvider:
    return OpenAIDraftProvider(api_key=KEY, model="gpt-test", base_url=llm.openai_base_url,
                               timeout=5.0)


async def test_openai_drafts_with_the_strict_schema_and_the_validator_accepts_it(
    llm: FakeLLM,
) -> None:
    llm.script(CHAT, Reply(body=openai_chat("```json\n" + json.dumps(DRAFT) + "\n```")))

    answer = await openai(llm).postmortem(build_postmortem_prompt(PACKET))

    assert validate_postmortem(answer.postmortem, PACKET) == []
    assert answer.postmortem.open_items[0].refs == ["dl:12"]  # one ref as a string, read
    assert answer.model == "gpt-test-2026"
    [sent] = llm.requests
    schema = sent.body["response_format"]["json_schema"]
    assert (schema["name"], schema["strict"]) == ("postmortem", True)
    assert schema["schema"]["required"] == ["impact", "timeline", "suspected_cause",
                                            "open_items"]
    user = sent.body["messages"][1]["content"]
    assert '"ref": "uw:41"' in user  # the packet travels as data
    assert "lan.nguyen" not in json.dumps(sent.body) and "op.kim" not in json.dumps(sent.body)


async def test_an_invented_figure_from_the_model_is_refused_by_the_validator(
    llm: FakeLLM,
) -> None:
    invented = {**DRAFT, "impact": [{"text": "9 unknown writes answered target_504.",
                                     "refs": ["code:target_504"]}]}
    llm.script(CHAT, Reply(body=openai_chat(json.dumps(invented))))

    answer = await openai(llm).postmortem(build_postmortem_prompt(PACKET))

    assert [(f.code, f.what) for f in validate_postmortem(answer.postmortem, PACKET)] == [
        ("figure_not_in_packet", "9")]


async def test_a_tool_call_and_a_429_are_what_they_are(llm: FakeLLM) -> None:
    llm.script(CHAT, Reply(body=openai_chat(tool_calls=[openai_tool_call(
        "replay_dead_letter", {"id": 12})], finish_reason="tool_calls")),
        Reply(status=429, headers={"retry-after": "3"}, body={"error": {"message": "slow"}}))

    with pytest.raises(ToolCallInOutput):
        await openai(llm).postmortem(build_postmortem_prompt(PACKET))
    with pytest.raises(RateLimited):
        await openai(llm).postmortem(build_postmortem_prompt(PACKET))


async def test_anthropic_drafts_with_the_schema_and_the_validator_accepts_it(
    llm: FakeLLM,
) -> None:
    llm.script(MESSAGES, Reply(body=anthropic_message(json.dumps({"postmortem": DRAFT}))))
    provider = AnthropicDraftProvider(api_key=KEY, model="claude-test",
                                      base_url=llm.anthropic_base_url, timeout=5.0)

    answer = await provider.postmortem(build_postmortem_prompt(PACKET))

    assert validate_postmortem(answer.postmortem, PACKET) == []
    [sent] = llm.requests
    assert sent.body["output_config"]["format"]["schema"]["required"][0] == "impact"


def test_the_configured_provider_drafts_postmortems_and_offline_is_the_default() -> None:
    offline = postmortem_provider(Settings.from_env({"TOLLGATE_DRAFT_PROVIDER": "offline"})
                                  .models.draft())
    hosted = postmortem_provider(Settings.from_env({"TOLLGATE_DRAFT_PROVIDER": "openai",
                                                    "OPENAI_API_KEY": KEY}).models.draft())

    assert isinstance(offline, OfflinePostmortemProvider)
    assert isinstance(hosted, OpenAIDraftProvider)


async def test_ops_incident_keeps_nothing_when_the_models_draft_is_refused(
    llm: FakeLLM, database_url: str, pool: asyncpg.Pool, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    await OpsStore(pool).dead_letter(
        workflow_id="event/acme/k-1", error_class="dead_letter", error_code="schema_drift",
        state="DEAD_LETTERED", owner="intake", replay_plan="fix the producer",
        redacted_payload=None, tenant_id="acme", event_id="k-1", correlation_id="c-1")
    invented = {"impact": [{"text": "4 dead letters were written.", "refs": ["sum:window"]}],
                "timeline": [{"text": "A dead letter was written.", "refs": ["dl:404"]}],
                "suspected_cause": [{"text": "Schema drift.", "refs": ["code:schema_drift"]}],
                "open_items": [{"text": "Replay everything."}]}
    llm.script(CHAT, Reply(body=openai_chat(json.dumps(invented))))
    s = Settings.from_env({"DATABASE_URL": database_url, "TOLLGATE_STATE_DIR": str(tmp_path),
                           "TOLLGATE_KEYS_FILE": str(TEST_KEYS_FILE),
                           "TOLLGATE_DRAFT_PROVIDER": "openai", "OPENAI_API_KEY": KEY,
                           "TOLLGATE_DRAFT_BASE_URL": llm.openai_base_url})

    assert await run_ops(["incident", "--since", "1h"], s) == Exit.REFUSED

    err = capsys.readouterr().err.strip()
    assert err.startswith("tollgate: refused: the draft does not rest on the packet: "
                          "figure_not_in_packet (impact 1: 4); unknown_ref (timeline 1: dl:404)")
    assert KEY not in err
    assert await pool.fetchval("SELECT count(*) FROM incident_drafts") == 0
