"""The models section: which drafter a draft worker uses, and with which key.

    TOLLGATE_DRAFT_PROVIDER   offline | openai | anthropic | openai-compatible. Unset: openai if
                              OPENAI_API_KEY is set, else anthropic if ANTHROPIC_API_KEY is set,
                              else offline (so a fresh checkout drafts with no key and no network)
    TOLLGATE_DRAFT_MODEL      model name; each provider has a default (openai-compatible has none)
    TOLLGATE_DRAFT_BASE_URL   endpoint; else OPENAI_BASE_URL / ANTHROPIC_BASE_URL; else the vendor's
    TOLLGATE_DRAFT_TIMEOUT    seconds per model call (default 30; keep it under DRAFT_TIMEOUT)
    TOLLGATE_DRAFT_API_KEY    key for any provider; else OPENAI_API_KEY / ANTHROPIC_API_KEY
    TOLLGATE_DRAFT_JSON_MODE  json_schema (default) | json_object (OpenAI-style plain JSON mode)
                              | prompt (no structured output: for endpoints that support neither)

Each value is checked when the settings are read; whether the chosen provider has its key is
checked only by ``draft()``, when a draft worker starts, because a main worker never holds one.
``tollgate.runtime.models.build_provider`` turns the result into a provider.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from pydantic import SecretStr, ValidationInfo, field_validator

from adapters.models.names import OFFLINE_MODEL
from contracts.errors import InvalidInput
from tollgate.config.base import ConfigError, Section, env_field

ProviderName = Literal["offline", "openai", "anthropic", "openai-compatible"]
JsonMode = Literal["json_schema", "json_object", "prompt"]

PROVIDERS: tuple[ProviderName, ...] = ("offline", "openai", "anthropic", "openai-compatible")
MODES: tuple[JsonMode, ...] = ("json_schema", "json_object", "prompt")
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
        """``ModelSettings.from_env(env).draft()``, every problem as ``InvalidInput``."""
        try:
            section = ModelSettings.from_env(env)
        except ConfigError as exc:
            raise InvalidInput("draft_config", exc.message) from None
        return section.draft()


class ModelSettings(Section):
    """The LLM provider of the draft worker, for drafting and tagging alike (docs/drafting.md,
    docs/tagging.md)."""

    provider: str | None = env_field(
        "TOLLGATE_DRAFT_PROVIDER", None, "offline | openai | anthropic | openai-compatible. "
        "Unset: openai if OPENAI_API_KEY is set, else anthropic if ANTHROPIC_API_KEY is set, "
        "else offline.")
    model: str | None = env_field(
        "TOLLGATE_DRAFT_MODEL", None, "Model name. Unset: the provider's default "
        "(openai-compatible has none).")
    base_url: str | None = env_field(
        "TOLLGATE_DRAFT_BASE_URL", None, "Model endpoint for any provider. Unset: "
        "OPENAI_BASE_URL / ANTHROPIC_BASE_URL, else the vendor's.")
    timeout: float = env_field(
        "TOLLGATE_DRAFT_TIMEOUT", DEFAULT_TIMEOUT, "Seconds per model call, in (0, 600]; keep "
        "it under the draft activity's timeout. A tagging call is cut at 20 s whatever this is.")
    api_key: SecretStr | None = env_field(
        "TOLLGATE_DRAFT_API_KEY", None, "Key for any provider. Unset: OPENAI_API_KEY / "
        "ANTHROPIC_API_KEY.")
    json_mode: JsonMode = env_field(
        "TOLLGATE_DRAFT_JSON_MODE", "json_schema", "json_schema | json_object (OpenAI-style "
        "plain JSON mode) | prompt (no structured output).")
    openai_api_key: SecretStr | None = env_field("OPENAI_API_KEY", None, "OpenAI's key.")
    openai_base_url: str | None = env_field("OPENAI_BASE_URL", None, "OpenAI's endpoint.")
    anthropic_api_key: SecretStr | None = env_field("ANTHROPIC_API_KEY", None, "Anthropic's key.")
    anthropic_base_url: str | None = env_field("ANTHROPIC_BASE_URL", None,
                                               "Anthropic's endpoint.")

    @field_validator("provider", "json_mode", mode="before")
    @classmethod
    def _known(cls, raw: Any, info: ValidationInfo) -> Any:
        value = str(raw).strip().lower()
        known: tuple[str, ...] = PROVIDERS if info.field_name == "provider" else MODES
        if value not in known:
            # Never the value: a key pasted into the wrong variable must not reach a log.
            raise ValueError(f"{cls.variable(str(info.field_name))} is not one of "
                             f"{', '.join(known)}")
        return value

    @field_validator("timeout", mode="before")
    @classmethod
    def _seconds(cls, raw: Any) -> float:
        try:
            seconds = float(raw)
        except (TypeError, ValueError):
            seconds = 0.0
        if not 0 < seconds <= 600:
            raise ValueError("TOLLGATE_DRAFT_TIMEOUT must be seconds in (0, 600]")
        return seconds

    @field_validator("model", "base_url", "openai_base_url", "anthropic_base_url",
                     mode="before")
    @classmethod
    def _stripped(cls, raw: Any) -> Any:
        return raw.strip() if isinstance(raw, str) else raw

    def draft(self) -> DraftSettings:
        """The provider, model, endpoint and key a draft worker uses.

        Raises:
            InvalidInput: the provider has no key, openai-compatible lacks a base URL or a
                model, or the JSON mode does not fit the provider (names, never values).
        """
        openai_key, anthropic_key = _clear(self.openai_api_key), _clear(self.anthropic_api_key)
        provider = self.provider or (
            "openai" if openai_key else "anthropic" if anthropic_key else "offline")
        if provider == "offline":
            return DraftSettings(model=self.model or OFFLINE_MODEL)
        vendor_key = anthropic_key if provider == "anthropic" else openai_key
        vendor_url = self.anthropic_base_url if provider == "anthropic" else self.openai_base_url
        api_key = _clear(self.api_key) or vendor_key
        base_url = self.base_url or vendor_url
        model = self.model or DEFAULT_MODELS.get(provider)
        if not api_key:
            raise InvalidInput("draft_config", f"no API key set for the {provider} provider")
        if provider == "openai-compatible" and not (base_url and model):
            raise InvalidInput(
                "draft_config", "openai-compatible needs TOLLGATE_DRAFT_BASE_URL and _MODEL"
            )
        if provider == "anthropic" and self.json_mode == "json_object":
            raise InvalidInput("draft_config", "TOLLGATE_DRAFT_JSON_MODE is not valid here")
        return DraftSettings(provider=cast(ProviderName, provider), model=cast(str, model),
                             base_url=base_url, timeout=self.timeout, json_mode=self.json_mode,
                             api_key=api_key)


def _clear(secret: SecretStr | None) -> str | None:
    value = secret.get_secret_value().strip() if secret else ""
    return value or None
