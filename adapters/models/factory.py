"""Which drafter a worker uses, decided from an explicit environment mapping.

    TOLLGATE_DRAFT_PROVIDER   offline | openai | anthropic | openai-compatible. Unset: openai if
                              OPENAI_API_KEY is set, else anthropic if ANTHROPIC_API_KEY is set,
                              else offline (so a fresh checkout drafts with no key and no network)
    TOLLGATE_DRAFT_MODEL      model name; each provider has a default (openai-compatible has none)
    TOLLGATE_DRAFT_BASE_URL   endpoint; else OPENAI_BASE_URL / ANTHROPIC_BASE_URL; else the vendor's
    TOLLGATE_DRAFT_TIMEOUT    seconds per model call (default 30; keep it under DRAFT_TIMEOUT)
    TOLLGATE_DRAFT_API_KEY    key for any provider; else OPENAI_API_KEY / ANTHROPIC_API_KEY
    TOLLGATE_DRAFT_JSON_MODE  json_schema (default) | json_object (OpenAI-style plain JSON mode)
                              | prompt (no structured output: for endpoints that support neither)

Nothing is read at import time; ``from_env(os.environ)`` is the caller's choice. Vendor SDKs are
imported only when their provider is built, so an offline worker never loads them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, cast

from adapters.models.offline import OFFLINE_MODEL, OfflineDraftProvider
from adapters.ports.models import DraftProvider
from contracts.errors import InvalidInput

ProviderName = Literal["offline", "openai", "anthropic", "openai-compatible"]
JsonMode = Literal["json_schema", "json_object", "prompt"]

_PROVIDERS: tuple[ProviderName, ...] = ("offline", "openai", "anthropic", "openai-compatible")
_MODES: tuple[JsonMode, ...] = ("json_schema", "json_object", "prompt")
DEFAULT_MODELS: dict[str, str] = {
    "offline": OFFLINE_MODEL,
    "openai": "gpt-4.1-mini",
    "anthropic": "claude-haiku-4-5",
}
DEFAULT_TIMEOUT = 30.0


@dataclass(frozen=True)
class DraftSettings:
    """Resolved drafting configuration. ``api_key`` is left out of repr so that logging or
    printing the settings can never leak it."""

    provider: ProviderName = "offline"
    model: str = OFFLINE_MODEL
    base_url: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    json_mode: JsonMode = "json_schema"
    api_key: str | None = field(default=None, repr=False)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> DraftSettings:
        """Resolve settings from ``env``.

        Raises:
            InvalidInput: an unknown provider or mode, a bad timeout, a provider without its
                key, or openai-compatible without a base URL or model (messages name the
                variable, never its value).
        """

        def get(name: str) -> str | None:
            return (env.get(name) or "").strip() or None

        openai_key, anthropic_key = get("OPENAI_API_KEY"), get("ANTHROPIC_API_KEY")
        provider = get("TOLLGATE_DRAFT_PROVIDER")
        if provider is None:
            provider = "openai" if openai_key else "anthropic" if anthropic_key else "offline"
        provider = provider.lower()
        if provider not in _PROVIDERS:
            raise InvalidInput("draft_config", "TOLLGATE_DRAFT_PROVIDER is not a known provider")
        if provider == "offline":
            return cls(model=get("TOLLGATE_DRAFT_MODEL") or OFFLINE_MODEL)

        vendor_key = anthropic_key if provider == "anthropic" else openai_key
        vendor_url = get("ANTHROPIC_BASE_URL" if provider == "anthropic" else "OPENAI_BASE_URL")
        api_key = get("TOLLGATE_DRAFT_API_KEY") or vendor_key
        base_url = get("TOLLGATE_DRAFT_BASE_URL") or vendor_url
        model = get("TOLLGATE_DRAFT_MODEL") or DEFAULT_MODELS.get(provider)
        json_mode = (get("TOLLGATE_DRAFT_JSON_MODE") or "json_schema").lower()
        if not api_key:
            raise InvalidInput("draft_config", f"no API key set for the {provider} provider")
        if provider == "openai-compatible" and not (base_url and model):
            raise InvalidInput(
                "draft_config", "openai-compatible needs TOLLGATE_DRAFT_BASE_URL and _MODEL"
            )
        if json_mode not in _MODES or (provider == "anthropic" and json_mode == "json_object"):
            raise InvalidInput("draft_config", "TOLLGATE_DRAFT_JSON_MODE is not valid here")
        return cls(
            provider=cast(ProviderName, provider),
            model=cast(str, model),
            base_url=base_url,
            timeout=_timeout(get("TOLLGATE_DRAFT_TIMEOUT")),
            json_mode=cast(JsonMode, json_mode),
            api_key=api_key,
        )


def build_provider(settings: DraftSettings) -> DraftProvider:
    """The provider the settings name. SDK clients are created here, never at import."""
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


def _timeout(value: str | None) -> float:
    if value is None:
        return DEFAULT_TIMEOUT
    try:
        seconds = float(value)
    except ValueError:
        seconds = 0.0
    if not 0 < seconds <= 600:
        raise InvalidInput("draft_config", "TOLLGATE_DRAFT_TIMEOUT must be seconds in (0, 600]")
    return seconds
