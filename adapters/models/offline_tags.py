"""The offline tagger: the default when no model key is set. It reads the item: its tags are the
keywords ``keywords.extract_keywords`` finds in the item's own title, description and text
(ADR 0042), answered in the first of the four shapes a real model returns, so the same parser
and the same merge rules run. No network, no clock, no randomness: the same item always gets
the same tags. ``delay`` stands in for a slow model (the benchmark's 5 s model) without
changing the answer.
"""

from __future__ import annotations

import asyncio
import json

from adapters.models.keywords import extract_keywords
from adapters.ports.models import TagReply
from contracts.tagging import TagPrompt

OFFLINE_TAG_MODEL = "offline-keywords-v1"


class OfflineTagProvider:
    """Satisfies ``TagProvider``: the item's heaviest keywords, confidence by weight."""

    name = "offline"

    def __init__(self, model: str = OFFLINE_TAG_MODEL, *, delay: float = 0.0) -> None:
        self.model = model
        self._delay = delay

    async def suggest_tags(self, prompt: TagPrompt) -> TagReply:
        if self._delay:
            await asyncio.sleep(self._delay)
        found = extract_keywords(prompt.title, prompt.description, prompt.text,
                                 limit=prompt.max_tags)
        answer = {"tags": [{"tag": k.name, "confidence": k.confidence} for k in found]}
        return TagReply(raw=json.dumps(answer, ensure_ascii=False), model=self.model)
