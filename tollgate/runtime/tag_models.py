"""The tagging model a draft worker runs: the drafter's provider, model, endpoint and key
(``TOLLGATE_DRAFT_*``, one set of model settings: ADR 0042), with the call cut at the seed's
20 s (``TAG_MODEL_TIMEOUT``) whatever the drafting timeout is.

Vendor SDKs are imported only when their provider is built, as in ``models.py``.
"""

from __future__ import annotations

from adapters.models.offline_tags import OfflineTagProvider
from adapters.ports.models import TagProvider
from contracts.errors import InvalidInput
from tollgate.config.models import DraftSettings
from tollgate.observability import tracing
from tollgate.runtime.models import endpoint_of
from workflows.timeouts import TAG_MODEL_TIMEOUT


def tag_call_timeout(settings: DraftSettings) -> float:
    """Seconds the SDK may spend on one tag call: never past the activity's own cut."""
    return min(settings.timeout, TAG_MODEL_TIMEOUT.total_seconds())


def build_tag_provider(settings: DraftSettings) -> TagProvider:
    """The tagging model the settings name, traced while tracing is on (a GenAI span per call,
    ``tollgate.observability.genai``)."""
    provider = _tag_adapter(settings)
    tracer = tracing.tracer("tollgate.genai")
    if tracer is None:
        return provider
    from tollgate.observability.genai import TracedTagProvider

    return TracedTagProvider(provider, tracer, base_url=endpoint_of(settings))


def _tag_adapter(settings: DraftSettings) -> TagProvider:
    if settings.provider == "offline":
        return OfflineTagProvider()
    if not settings.api_key:
        raise InvalidInput("draft_config", f"no API key set for the {settings.provider} provider")
    if settings.provider == "anthropic":
        from adapters.models.anthropic_tags import AnthropicTagProvider

        return AnthropicTagProvider(
            api_key=settings.api_key, model=settings.model, base_url=settings.base_url,
            timeout=tag_call_timeout(settings),
            json_mode="prompt" if settings.json_mode == "prompt" else "json_schema",
        )
    from adapters.models.openai_tags import OpenAITagProvider

    return OpenAITagProvider(
        api_key=settings.api_key, model=settings.model, base_url=settings.base_url,
        timeout=tag_call_timeout(settings), compatible=settings.provider == "openai-compatible",
        json_mode=settings.json_mode,
    )
