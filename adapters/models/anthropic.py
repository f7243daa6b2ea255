"""Anthropic messages behind the ``DraftProvider`` port.

The contract's JSON schema goes in as structured output (``output_config.format``), not as a
tool: we offer the model no tools at all, so any ``tool_use`` block in the answer is the model
trying to act and raises ``ToolCallInOutput``. ``stop_reason == "refusal"`` raises
``ModelRefused``; ``"max_tokens"`` raises ``UnreadableOutput("truncated_output")``.

Built with ``max_retries=0`` (Temporal owns retries) and an explicit key and base URL, so the
SDK never falls back to the process environment on its own.
"""

from __future__ import annotations

from typing import Any, Literal

import anthropic

from adapters.models.answer_errors import Failure, UnreadableOutput, answer_failure
from adapters.models.sdk_provider import SdkDraftProvider, status_failure
from adapters.ports.models import TokenUsage, token_usage
from contracts.errors import RetryableError

ANTHROPIC_BASE_URL = "https://api.anthropic.com"
_TOOL_BLOCKS = frozenset({"tool_use", "server_tool_use"})
JsonMode = Literal["json_schema", "prompt"]


class AnthropicDraftProvider(SdkDraftProvider):
    """Drafts through ``/v1/messages``.

    Args:
        json_mode: ``json_schema`` (structured output, the default) or ``prompt`` (for gateways
            and models without structured outputs; the tolerant parser reads the text).
        timeout, max_tokens: the call's budget; by default the class's (the tagger's is smaller).
    """

    name = "anthropic"
    _client: anthropic.AsyncAnthropic

    def __init__(
        self,
        *,
        api_key: str,
        model: str,
        base_url: str | None = None,
        timeout: float | None = None,
        json_mode: JsonMode = "json_schema",
        max_tokens: int | None = None,
    ) -> None:
        self.model = model
        self._json_mode = json_mode
        self._max_tokens = self.MAX_TOKENS if max_tokens is None else max_tokens
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key,
            base_url=base_url or ANTHROPIC_BASE_URL,
            timeout=self.TIMEOUT if timeout is None else timeout,
            max_retries=0,
        )

    async def _complete(self, system: str, user: str, schema: dict[str, Any], name: str,
                        fail: Failure = answer_failure) -> tuple[str, str, TokenUsage | None]:
        """One message (``SdkDraftProvider._complete``); the schema goes unnamed, so ``name``
        is not sent."""
        kwargs: dict[str, Any] = {
            "model": self.model, "max_tokens": self._max_tokens, "system": system,
            "messages": [{"role": "user", "content": user}],
        }
        if self._json_mode == "json_schema":
            kwargs["output_config"] = {"format": {"type": "json_schema", "schema": schema}}
        try:
            response = await self._client.messages.with_raw_response.create(**kwargs)
        except anthropic.APIError as exc:
            raise _classify(exc) from None
        body = await response.text()
        try:
            message = await response.parse()
            blocks = list(message.content)
            raw = "".join(getattr(b, "text", "") for b in blocks if b.type == "text")
            tools = [str(getattr(b, "name", "?")) for b in blocks if b.type in _TOOL_BLOCKS]
            stop, model = message.stop_reason, message.model or self.model
            usage = _usage(getattr(message, "usage", None))
        except (ValueError, AttributeError, TypeError):
            # A 200 whose body is not a message (a gateway's HTML page, a bare object).
            raise fail("unreadable_output", body) from None
        if tools:
            raise fail("tool_call", raw or "tool calls: " + ", ".join(tools))
        if stop == "refusal":
            raise fail("model_refused", raw)
        if stop == "max_tokens":
            raise fail("truncated_output", raw)
        return raw, model, usage


def _usage(usage: Any) -> TokenUsage | None:
    """The answer's token counts. Anthropic's ``input_tokens`` leaves out the tokens read from
    or written to the prompt cache; the port counts every input token, so they are added."""
    parts = [getattr(usage, name, None) for name in
             ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")]
    counted = [p for p in parts if isinstance(p, int)]
    return token_usage(sum(counted) if counted else None, getattr(usage, "output_tokens", None))


def _classify(exc: anthropic.APIError) -> Exception:
    if isinstance(exc, anthropic.APITimeoutError):
        return RetryableError("provider_timeout")
    if isinstance(exc, anthropic.APIConnectionError):
        return RetryableError("provider_unreachable")
    if isinstance(exc, anthropic.APIStatusError):
        return status_failure(exc.status_code, exc.response.headers)
    return UnreadableOutput("unreadable_output")
