"""Model ports: a drafting model and a tagging model, behind one Protocol each.

Implementations: ``adapters/models/`` (OpenAI, Anthropic, the offline drafter and tagger). The
parsing helpers there (``draft_parsing``, ``tag_parsing``) are pure functions of the answer's
text; the draft parser's exceptions are what the OpenAI and Anthropic drafters raise for an
answer they cannot accept.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from contracts import Draft, DraftPrompt
from contracts.tagging import TagPrompt


class ModelAnswer(BaseModel):
    """A provider's parsed answer plus the raw text it came from (kept, redacted, for review)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    draft: Draft
    raw: str
    model: str


@runtime_checkable
class DraftProvider(Protocol):
    """Turns a rendered prompt into a ``Draft``. Raises ``RetryableError`` subclasses for output it
    cannot read (never an empty success), timeouts and 5xx; ``RateLimited`` on 429."""

    name: str
    model: str

    async def propose(self, prompt: DraftPrompt) -> ModelAnswer: ...


class TagReply(BaseModel):
    """A model's tag answer as raw text; ``adapters.models.tag_parsing`` reads it in the
    activity."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    raw: str
    model: str


@runtime_checkable
class TagProvider(Protocol):
    """Asks a model for tags for one saved item. Raises ``RetryableError`` on timeouts and 5xx,
    ``RateLimited`` on 429; reading the answer is the caller's job (tolerant parsing)."""

    name: str
    model: str

    async def suggest_tags(self, prompt: TagPrompt) -> TagReply: ...
