"""Anthropic messages behind the ``TagProvider`` port.

The drafter in ``anthropic.py`` with the tagger's budget: the same client (``max_retries=0``, an
explicit key and base URL), wire and error mapping. The tag schema goes in as structured output
(``output_config.format``) unless ``json_mode`` is ``prompt``; no tools are offered, so a
``tool_use`` block, a refusal or a cut-off answer is not an answer and raises ``UnreadableTags``
(retried, never an empty success). The text goes back unread for ``tag_parsing``.
"""

from __future__ import annotations

from adapters.models.anthropic import AnthropicDraftProvider
from adapters.models.tag_parsing import tag_failure
from adapters.models.tag_prompt import TAG_SCHEMA, tag_system, tag_user
from adapters.ports.models import TagReply
from contracts.tagging import TagPrompt


class AnthropicTagProvider(AnthropicDraftProvider):
    """Tags through ``/v1/messages``: the drafter's client, options and request, with the
    tagger's smaller budget."""

    TIMEOUT, MAX_TOKENS = 20.0, 300

    async def suggest_tags(self, prompt: TagPrompt) -> TagReply:
        raw, model, usage = await self._complete(tag_system(prompt), tag_user(prompt),
                                                 TAG_SCHEMA, "tags", fail=tag_failure)
        return TagReply(raw=raw, model=model, usage=usage)
