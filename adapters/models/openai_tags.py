"""OpenAI chat completions (and OpenAI-compatible endpoints) behind the ``TagProvider`` port.

The drafter in ``openai.py`` with the tagger's budget: the same client (``max_retries=0``, so
each attempt is the workflow's and visible in history), wire and error mapping (429 -> rate
limited with its Retry-After, 5xx/timeouts -> retryable, other 4xx -> rejected). The answer's
text goes back unread: ``tag_parsing`` reads it in the activity. What is not an answer at all
(no choices, a tool call, a refusal, a cut-off answer) raises ``UnreadableTags``, so the attempt
fails and is tried again; it is never an empty success.
"""

from __future__ import annotations

from adapters.models.openai import OpenAIDraftProvider
from adapters.models.tag_parsing import tag_failure
from adapters.models.tag_prompt import TAG_SCHEMA, tag_system, tag_user
from adapters.ports.models import TagReply
from contracts.tagging import TagPrompt


class OpenAITagProvider(OpenAIDraftProvider):
    """Tags through ``/chat/completions``: the drafter's client, options and request, with the
    tagger's smaller budget (the shell still caps the timeout: ``tollgate/runtime/tag_models``)."""

    TIMEOUT, MAX_TOKENS = 20.0, 300

    async def suggest_tags(self, prompt: TagPrompt) -> TagReply:
        raw, model, usage = await self._complete(tag_system(prompt), tag_user(prompt),
                                                 TAG_SCHEMA, "tags", fail=tag_failure)
        return TagReply(raw=raw, model=model, usage=usage)
