"""OpenAI chat completions behind the ``DraftProvider`` port, plus the OpenAI-compatible mode
(Gemini's OpenAI endpoint, vLLM, Ollama, gateways) that speaks the same wire format.

The client is built with ``max_retries=0``: Temporal owns retries, so every attempt is visible
in history. Errors become taxonomy exceptions raised ``from None`` with status codes only; SDK
messages can quote the request or response body, which may hold customer data.

Outcomes beyond a draft: a tool or function call raises ``ToolCallInOutput`` (we send no tools,
so any call is the model trying to act); ``message.refusal`` or a content-filter stop raises
``ModelRefused``; ``finish_reason == "length"`` raises ``UnreadableOutput("truncated_output")``.
"""

from __future__ import annotations

import json
from typing import Any, Literal

import openai

from adapters.models.answer_errors import Failure, UnreadableOutput, answer_failure
from adapters.models.sdk_provider import SdkDraftProvider, status_failure
from adapters.ports.models import TokenUsage, token_usage
from contracts.errors import RetryableError

OPENAI_BASE_URL = "https://api.openai.com/v1"
JsonMode = Literal["json_schema", "json_object", "prompt"]


class OpenAIDraftProvider(SdkDraftProvider):
    """Drafts through ``/chat/completions``.

    Args:
        compatible: True for a non-OpenAI endpoint; sends ``max_tokens`` (widely supported)
            instead of ``max_completion_tokens`` and reports itself as ``openai-compatible``.
        json_mode: ``json_schema`` (strict structured output, the default), ``json_object``
            (plain JSON mode for endpoints without schema support) or ``prompt`` (nothing but
            the prompt; the tolerant parser does the rest).
        timeout, max_tokens: the call's budget; by default the class's (the tagger's is smaller).
    """

    _client: openai.AsyncOpenAI

    def __init__(
        self,
        *,
        api_key: str,
        model: str,
        base_url: str | None = None,
        timeout: float | None = None,
        compatible: bool = False,
        json_mode: JsonMode = "json_schema",
        max_tokens: int | None = None,
    ) -> None:
        self.name = "openai-compatible" if compatible else "openai"
        self.model = model
        self._compatible = compatible
        self._json_mode = json_mode
        self._max_tokens = self.MAX_TOKENS if max_tokens is None else max_tokens
        self._client = openai.AsyncOpenAI(
            api_key=api_key,
            base_url=base_url or OPENAI_BASE_URL,
            timeout=self.TIMEOUT if timeout is None else timeout,
            max_retries=0,
        )

    async def _complete(self, system: str, user: str, schema: dict[str, Any], name: str,
                        fail: Failure = answer_failure) -> tuple[str, str, TokenUsage | None]:
        """One chat completion (``SdkDraftProvider._complete``); in ``json_schema`` mode the
        schema goes as strict structured output under ``name``."""
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        }
        kwargs["max_tokens" if self._compatible else "max_completion_tokens"] = self._max_tokens
        if self._json_mode == "json_schema":
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": name, "strict": True, "schema": schema},
            }
        elif self._json_mode == "json_object":
            kwargs["response_format"] = {"type": "json_object"}
        try:
            response = await self._client.chat.completions.with_raw_response.create(**kwargs)
        except openai.APIError as exc:
            raise _classify(exc) from None
        body = response.text
        try:
            completion = response.parse()
            choice = completion.choices[0] if completion.choices else None
            message = choice.message if choice else None
            raw = _text(message.content) if message else ""
            calls = _call_names(message) if message else []
            refusal = message.refusal if message else None
            finish = choice.finish_reason if choice else None
            model = completion.model or self.model
            usage = _usage(getattr(completion, "usage", None))
        except (ValueError, AttributeError, TypeError):
            # A 200 whose body is not a chat completion (a gateway's HTML page, a bare object).
            raise fail("unreadable_output", body) from None
        if calls:
            raise fail("tool_call", raw or "tool calls: " + ", ".join(calls))
        if refusal or finish == "content_filter":
            raise fail("model_refused", refusal or raw)
        if finish == "length":
            raise fail("truncated_output", raw)
        if choice is None:  # no choices at all: empty if the list was there, else unreadable
            raise fail("empty_output" if completion.choices == [] else "unreadable_output", body)
        if message is None:  # a choice with no message: nothing said (what every parser concludes)
            raise fail("empty_output", "")
        return raw, model, usage


def _text(content: Any) -> str:
    """Message content as text: a string, a list of parts (some gateways) or an object."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return json.dumps(content, ensure_ascii=False)


def _call_names(message: Any) -> list[str]:
    """Which tools the model tried to call, for the reviewer; arguments may hold anything."""
    names = [getattr(getattr(c, "function", None), "name", "?") for c in message.tool_calls or []]
    if message.function_call:
        names.append(getattr(message.function_call, "name", "?"))
    return [str(n) for n in names]


def _usage(usage: Any) -> TokenUsage | None:
    """The answer's token counts; ``prompt_tokens`` already includes cached input tokens."""
    return token_usage(getattr(usage, "prompt_tokens", None),
                       getattr(usage, "completion_tokens", None))


def _classify(exc: openai.APIError) -> Exception:
    if isinstance(exc, openai.APITimeoutError):
        return RetryableError("provider_timeout")
    if isinstance(exc, openai.APIConnectionError):
        return RetryableError("provider_unreachable")
    if isinstance(exc, openai.APIStatusError):
        return status_failure(exc.status_code, exc.response.headers)
    # Malformed response bodies and anything else the SDK could not make sense of.
    return UnreadableOutput("unreadable_output")
