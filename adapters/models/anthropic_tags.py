"""Anthropic messages behind the ``TagProvider`` port.

Same wire and error mapping as the drafter in ``anthropic.py``, on a client of its own with
``max_retries=0`` and an explicit key and base URL. The tag schema goes in as structured output
(``output_config.format``) unless ``json_mode`` is ``prompt``; no tools are offered, so a
``tool_use`` block, a refusal or a cut-off answer is not an answer and raises ``UnreadableTags``
(retried, never an empty success). The text goes back unread for ``tag_parsing``.
"""

from __future__ import annotations

from typing import Any, Literal

import anthropic

from adapters.models.anthropic import ANTHROPIC_BASE_URL, _classify, _usage
from adapters.models.tag_parsing import UnreadableTags
from adapters.models.tag_prompt import TAG_SCHEMA, tag_system, tag_user
from adapters.ports.models import TagReply
from contracts.tagging import TagPrompt

_TOOL_BLOCKS = frozenset({"tool_use", "server_tool_use"})


class AnthropicTagProvider:
    name = "anthropic"

    def __init__(
        self,
        *,
        api_key: str,
        model: str,
        base_url: str | None = None,
        timeout: float = 20.0,
        json_mode: Literal["json_schema", "prompt"] = "json_schema",
        max_tokens: int = 300,
    ) -> None:
        self.model = model
        self._json_mode = json_mode
        self._max_tokens = max_tokens
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key, base_url=base_url or ANTHROPIC_BASE_URL, timeout=timeout,
            max_retries=0,
        )

    async def suggest_tags(self, prompt: TagPrompt) -> TagReply:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self._max_tokens,
            "system": tag_system(prompt),
            "messages": [{"role": "user", "content": tag_user(prompt)}],
        }
        if self._json_mode == "json_schema":
            kwargs["output_config"] = {"format": {"type": "json_schema", "schema": TAG_SCHEMA}}
        try:
            message = await self._client.messages.create(**kwargs)
        except anthropic.APIError as exc:
            raise _classify(exc) from None
        try:
            blocks = list(message.content)
            raw = "".join(getattr(b, "text", "") for b in blocks if b.type == "text")
            acted = any(b.type in _TOOL_BLOCKS for b in blocks)
            stop, model = message.stop_reason, message.model or self.model
            usage = _usage(getattr(message, "usage", None))
        except (AttributeError, TypeError, ValueError):
            raise UnreadableTags("unreadable_output") from None
        if acted:
            raise UnreadableTags("tool_call_in_output")
        if stop == "refusal":
            raise UnreadableTags("model_refused")
        if stop == "max_tokens":
            raise UnreadableTags("truncated_output")
        return TagReply(raw=raw, model=model, usage=usage)
