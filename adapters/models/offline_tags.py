"""The offline tagger: the default when no model key is set. No network, no clock, no
randomness: the tags come from a small table of phrases found in the item's title and
description, so the demo and the tests need no key. ``delay`` stands in for a slow model (the
benchmark's 5 s model) without changing the answer.
"""

from __future__ import annotations

import asyncio
import json
import re
import unicodedata

from adapters.ports.models import TagReply
from contracts.tagging import TagPrompt

OFFLINE_TAG_MODEL = "offline-tags-v1"

#: Folded phrase in the text -> the tag the offline model proposes, in the words a model would.
_TOPICS: tuple[tuple[str, str], ...] = (
    ("thiet ke ui", "Thiết kế UI"),
    ("ui design", "UI design"),
    ("figma", "Figma"),
    ("typescript", "TypeScript"),
    ("javascript", "JavaScripts"),
    ("python", "Python"),
    ("postgres", "PostgreSQL"),
    ("temporal", "Temporal"),
    ("recipe", "recipes"),
    ("travel", "travel"),
)


def _fold(text: str) -> str:
    plain = "".join(c for c in unicodedata.normalize("NFKD", text.replace("đ", "d"))
                    if not unicodedata.combining(c))
    return re.sub(r"[^a-z0-9]+", " ", plain.lower()).strip()


class OfflineTagProvider:
    """Satisfies ``TagProvider``: phrases found in order of the table, confidence falling."""

    name = "offline"

    def __init__(self, model: str = OFFLINE_TAG_MODEL, *, delay: float = 0.0) -> None:
        self.model = model
        self._delay = delay

    async def suggest_tags(self, prompt: TagPrompt) -> TagReply:
        if self._delay:
            await asyncio.sleep(self._delay)
        text = f" {_fold(prompt.title)} {_fold(prompt.description)} "
        found = [tag for phrase, tag in _TOPICS if f" {phrase} " in text]
        answer = {"tags": [{"tag": t, "confidence": round(0.9 - 0.05 * i, 2)}
                           for i, t in enumerate(found[: prompt.max_tags])]}
        return TagReply(raw=json.dumps(answer, ensure_ascii=False), model=self.model)
