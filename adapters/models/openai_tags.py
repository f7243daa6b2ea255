"""OpenAI chat completions (and OpenAI-compatible endpoints) behind the ``TagProvider`` port.

Same wire and the same error mapping as the drafter in ``openai.py`` (429 -> rate limited with
its Retry-After, 5xx/timeouts -> retryable, other 4xx -> rejected), on a client of its own built
with ``max_retries=0`` so each attempt is the workflow's and visible in history. The answer's
text goes back unread: ``tag_parsing`` reads it in the activity. What is not an answer at all
(no choices, a tool call, a refusal, a cut-off answer) raises ``UnreadableTags``, so the attempt
fails and is tried again; it is never an empty success.
"""

from __future__ import annotations

import openai

from adapters.models.openai import OPENAI_BASE_URL, JsonMode, complete
from adapters.models.tag_parsing import tag_failure
from adapters.models.tag_prompt import TAG_SCHEMA, tag_system, tag_user
from adapters.ports.models import TagReply
from contracts.tagging import TagPrompt


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
        raw, model, usage = await complete(
            self._client, self.model, tag_system(prompt), tag_user(prompt), TAG_SCHEMA, "tags",
            compatible=self._compatible, json_mode=self._json_mode, max_tokens=self._max_tokens,
            fail=tag_failure)
        return TagReply(raw=raw, model=model, usage=usage)
