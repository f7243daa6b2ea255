"""OpenAI chat completions (and OpenAI-compatible endpoints) behind the ``TagProvider`` port.

Same wire and the same error mapping as the drafter in ``openai.py`` (429 -> rate limited with
its Retry-After, 5xx/timeouts -> retryable, other 4xx -> rejected), on a client of its own built
with ``max_retries=0`` so each attempt is the workflow's and visible in history. The answer's
text goes back unread: ``tag_parsing`` reads it in the activity. What is not an answer at all
(no choices, a tool call, a refusal, a cut-off answer) raises ``UnreadableTags``, so the attempt
fails and is tried again; it is never an empty success.
"""

from __future__ import annotations

from typing import Any, Literal

import openai

from adapters.models.openai import OPENAI_BASE_URL, _classify, _text, _usage
from adapters.models.tag_parsing import UnreadableTags
from adapters.models.tag_prompt import TAG_SCHEMA, tag_system, tag_user
from adapters.ports.models import TagReply
from contracts.tagging import TagPrompt

JsonMode = Literal["json_schema", "json_object", "prompt"]


class OpenAITagProvider:
    """Tags through ``/chat/completions``; ``compatible`` and ``json_mode`` as for the drafter."""

    def __init__(
        self,
        *,
        api_key: str,
        model: str,
        base_url: str | None = None,
        timeout: float = 20.0,
        compatible: bool = False,
        json_mode: JsonMode = "json_schema",
        max_tokens: int = 300,
    ) -> None:
        self.name = "openai-compatible" if compatible else "openai"
        self.model = model
        self._compatible = compatible
        self._json_mode = json_mode
        self._max_tokens = max_tokens
        self._client = openai.AsyncOpenAI(
            api_key=api_key, base_url=base_url or OPENAI_BASE_URL, timeout=timeout, max_retries=0
        )

    async def suggest_tags(self, prompt: TagPrompt) -> TagReply:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": tag_system(prompt)},
                {"role": "user", "content": tag_user(prompt)},
            ],
        }
        kwargs["max_tokens" if self._compatible else "max_completion_tokens"] = self._max_tokens
        if self._json_mode == "json_schema":
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "tags", "strict": True, "schema": TAG_SCHEMA},
            }
        elif self._json_mode == "json_object":
            kwargs["response_format"] = {"type": "json_object"}
        try:
            completion = await self._client.chat.completions.create(**kwargs)
        except openai.APIError as exc:
            raise _classify(exc) from None
        try:
            choice = completion.choices[0]
            message = choice.message
            raw = _text(message.content)
            acted = bool(message.tool_calls or message.function_call)
            refused = bool(message.refusal) or choice.finish_reason == "content_filter"
            model = completion.model or self.model
            usage = _usage(getattr(completion, "usage", None))
        except (AttributeError, IndexError, TypeError, ValueError):
            # A 200 that is not a chat completion (a gateway's page, no choices).
            raise UnreadableTags("unreadable_output") from None
        if acted:
            raise UnreadableTags("tool_call_in_output")
        if refused:
            raise UnreadableTags("model_refused")
        if choice.finish_reason == "length":
            raise UnreadableTags("truncated_output")
        return TagReply(raw=raw, model=model, usage=usage)
