"""Anthropic messages behind the ``TagProvider`` port.

Same wire and error mapping as the drafter in ``anthropic.py``, on a client of its own with
``max_retries=0`` and an explicit key and base URL. The tag schema goes in as structured output
(``output_config.format``) unless ``json_mode`` is ``prompt``; no tools are offered, so a
``tool_use`` block, a refusal or a cut-off answer is not an answer and raises ``UnreadableTags``
(retried, never an empty success). The text goes back unread for ``tag_parsing``.
"""

from __future__ import annotations

import anthropic

from adapters.models.anthropic import ANTHROPIC_BASE_URL, JsonMode, complete
from adapters.models.tag_parsing import tag_failure
from adapters.models.tag_prompt import TAG_SCHEMA, tag_system, tag_user
from adapters.ports.models import TagReply
from contracts.tagging import TagPrompt


class AnthropicTagProvider:
    name = "anthropic"

    def __init__(
        self,
        *,
        api_key: str,
        model: str,
        base_url: str | None = None,
        timeout: float = 20.0,
        json_mode: JsonMode = "json_schema",
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
        raw, model, usage = await complete(
            self._client, self.model, tag_system(prompt), tag_user(prompt), TAG_SCHEMA,
            json_mode=self._json_mode, max_tokens=self._max_tokens, fail=tag_failure)
        return TagReply(raw=raw, model=model, usage=usage)
