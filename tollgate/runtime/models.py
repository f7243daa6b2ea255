"""The model providers a worker runs, assembled from the settings tree's ``DraftSettings``.

Vendor SDKs are imported only when their provider is built, so an offline worker never loads
them; each adapter gets plain constructor arguments and never reads configuration itself. With
tracing on, the drafter is wrapped so each model call is a GenAI span
(``tollgate.observability.genai``); off, the adapter is returned as it is.
"""

from __future__ import annotations

import contextlib

from adapters.models.offline import OfflineDraftProvider
from adapters.models.offline_triage import OfflineTriageProvider
from adapters.ports.models import Closable, DraftProvider, PostmortemProvider, TriageProvider
from contracts.errors import InvalidInput
from tollgate.config.models import DraftSettings
from tollgate.observability import tracing


async def close_providers(*providers: object) -> None:
    """Close the vendor SDK clients behind ``providers`` (each drafter, triager, tagger or
    postmortem writer holds its own), tracing wrappers seen through; the offline ones hold
    nothing. Each is closed even when one before it fails to."""
    for provider in providers:
        while not isinstance(provider, Closable) and hasattr(provider, "inner"):
            provider = provider.inner
        if isinstance(provider, Closable):
            with contextlib.suppress(Exception):
                await provider.aclose()


def build_provider(settings: DraftSettings) -> DraftProvider:
    """The provider the settings name, traced when tracing is on."""
    provider = _adapter(settings)
    tracer = tracing.tracer("tollgate.genai")
    if tracer is None:
        return provider
    from tollgate.observability.genai import TracedDraftProvider

    return TracedDraftProvider(provider, tracer, base_url=endpoint_of(settings))


def endpoint_of(settings: DraftSettings) -> str | None:
    """Where the adapter sends its calls (the span's server), None for the offline drafter."""
    if settings.provider == "offline":
        return None
    if settings.base_url:
        return settings.base_url
    if settings.provider == "anthropic":
        from adapters.models.anthropic import ANTHROPIC_BASE_URL

        return ANTHROPIC_BASE_URL
    from adapters.models.openai import OPENAI_BASE_URL

    return OPENAI_BASE_URL


def _adapter(settings: DraftSettings) -> DraftProvider:
    """The adapter the settings name. SDK clients are created here, never at import."""
    if settings.provider == "offline":
        return OfflineDraftProvider(model=settings.model)
    if not settings.api_key:
        raise InvalidInput("draft_config", f"no API key set for the {settings.provider} provider")
    if settings.provider == "anthropic":
        from adapters.models.anthropic import AnthropicDraftProvider

        return AnthropicDraftProvider(
            api_key=settings.api_key,
            model=settings.model,
            base_url=settings.base_url,
            timeout=settings.timeout,
            json_mode="prompt" if settings.json_mode == "prompt" else "json_schema",
        )
    from adapters.models.openai import OpenAIDraftProvider

    return OpenAIDraftProvider(
        api_key=settings.api_key,
        model=settings.model,
        base_url=settings.base_url,
        timeout=settings.timeout,
        compatible=settings.provider == "openai-compatible",
        json_mode=settings.json_mode,
    )


def triage_provider(settings: DraftSettings) -> TriageProvider:
    """The model that triages inbound messages (ADR 0044): the configured provider where it
    triages too (OpenAI, Anthropic: the same key, model and endpoint as drafts), else the
    offline triage. Built apart from the drafter, which tracing may have wrapped; traced the
    same way (``TracedTriageProvider``) while tracing is on."""
    adapter = _adapter(settings)
    triager = adapter if isinstance(adapter, TriageProvider) else OfflineTriageProvider()
    tracer = tracing.tracer("tollgate.genai")
    if tracer is None:
        return triager
    from tollgate.observability.genai import TracedTriageProvider

    base_url = endpoint_of(settings) if triager is adapter else None
    return TracedTriageProvider(triager, tracer, base_url=base_url)


def postmortem_provider(settings: DraftSettings) -> PostmortemProvider:
    """The model that drafts incident postmortems (ADR 0046): the configured provider where it
    drafts them (OpenAI, Anthropic), else the offline summary from the same packet."""
    adapter = _adapter(settings)
    if isinstance(adapter, PostmortemProvider):
        return adapter
    from adapters.models.offline_postmortem import OfflinePostmortemProvider

    return OfflinePostmortemProvider()
