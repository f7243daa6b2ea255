"""A stopped draft worker (or a finished `ops incident`) leaves no connection open to the model
endpoint: each provider holds a vendor SDK client with a keep-alive pool, closed when its owner
is done, not whenever the garbage collector gets to it (the openai SDK then warns that
``AsyncClient.aclose`` was never awaited)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from temporalio.testing import WorkflowEnvironment

from contracts.errors import RetryableError
from contracts.tagging import TagPrompt
from policies.prompts import build_prompt
from tests.adapters.fake_llm import CHAT, MESSAGES, FakeLLM, Reply, care_due_request
from tollgate.config.models import DraftSettings
from tollgate.config.settings import Settings
from tollgate.runtime import workers
from tollgate.runtime.models import build_provider, close_providers, triage_provider
from tollgate.runtime.tag_models import build_tag_provider

KEY = "sk-test-DO-NOT-LEAK-0123456789abcdef"
TAG_PROMPT = TagPrompt(item_id=7, title="Dashboards", url="https://example.test/a")


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


def established_to(port: int) -> int:
    """Client sockets of this machine in ESTABLISHED state whose far end is ``port``."""
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        path = Path(table)
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            fields = line.split()
            remote_port = int(fields[2].rsplit(":", 1)[1], 16)
            if remote_port == port and fields[3] == "01":
                count += 1
    return count


async def touch(provider: Any) -> None:
    """One call, answered 500: enough for the SDK to open and keep a pooled connection."""
    prompt = build_prompt(care_due_request())
    for method, argument in (("propose", prompt), ("triage", prompt),
                             ("suggest_tags", TAG_PROMPT)):
        if hasattr(provider, method):
            with contextlib.suppress(RetryableError):
                await getattr(provider, method)(argument)
            return
    raise AssertionError(f"{provider!r} has no call to make")


def settings_for(vendor: str, llm: FakeLLM) -> DraftSettings:
    base = llm.openai_base_url if vendor == "openai" else llm.anthropic_base_url
    return DraftSettings.from_env({"TOLLGATE_DRAFT_PROVIDER": vendor,
                                   "TOLLGATE_DRAFT_API_KEY": KEY,
                                   "TOLLGATE_DRAFT_BASE_URL": base})


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="needs Linux's /proc/net/tcp")
@pytest.mark.parametrize("vendor", ["openai", "anthropic"])
async def test_closing_a_provider_closes_its_connections(vendor: str, llm: FakeLLM) -> None:
    llm.script(CHAT if vendor == "openai" else MESSAGES, Reply(status=500, body={}))
    provider = build_provider(settings_for(vendor, llm))
    await touch(provider)
    assert established_to(llm.port) == 1  # kept alive for the next call

    await close_providers(provider)

    assert established_to(llm.port) == 0


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="needs Linux's /proc/net/tcp")
async def test_a_stopped_draft_worker_closes_every_providers_client(
        env: WorkflowEnvironment, llm: FakeLLM, monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    built: list[object] = []

    def keep(build):  # type: ignore[no-untyped-def]
        def making(settings: DraftSettings) -> object:
            built.append(build(settings))
            return built[-1]
        return making

    for name, build in (("build_provider", build_provider), ("triage_provider", triage_provider),
                        ("build_tag_provider", build_tag_provider)):
        monkeypatch.setattr(workers, name, keep(build))
    llm.script(CHAT, *[Reply(status=500, body={})] * 3)
    s = Settings.from_env({"TOLLGATE_DRAFT_PROVIDER": "openai", "TOLLGATE_DRAFT_API_KEY": KEY,
                           "TOLLGATE_DRAFT_BASE_URL": llm.openai_base_url,
                           "TOLLGATE_STATE_DIR": str(tmp_path)})

    async with workers.draft_worker(env.client, s):
        assert len(built) == 3  # the drafter, the triager and the tagger: a client each
        for provider in built:
            await touch(provider)
        assert established_to(llm.port) == 3

    assert established_to(llm.port) == 0
