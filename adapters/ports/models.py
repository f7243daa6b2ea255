"""Model ports: a drafting model, a triage model and a tagging model, one Protocol each.

Implementations: ``adapters/models/`` (OpenAI, Anthropic, the offline drafter and tagger). The
parsing helpers there (``draft_parsing``, ``tag_parsing``) are pure functions of the answer's
text; the draft parser's exceptions are what the OpenAI and Anthropic drafters raise for an
answer they cannot accept.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from contracts import Draft, DraftPrompt
from contracts.incident import Postmortem, PostmortemPrompt
from contracts.tagging import TagPrompt
from contracts.triage import TriageProposal


class TokenUsage(BaseModel):
    """Tokens a provider says one call used, as its answer reports them (for traces and cost;
    never estimated). ``input_tokens`` counts every input token, cached ones included."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input_tokens: int | None = Field(default=None, ge=0)
    output_tokens: int | None = Field(default=None, ge=0)


def token_usage(input_tokens: object, output_tokens: object) -> TokenUsage | None:
    """Usage from what an answer reported: a count that is not a whole number >= 0 is left
    out, and None when neither is one. Token counts never make an answer unreadable."""

    def count(value: object) -> int | None:
        ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
        return value if ok else None  # type: ignore[return-value]

    found = count(input_tokens), count(output_tokens)
    if found == (None, None):
        return None
    return TokenUsage(input_tokens=found[0], output_tokens=found[1])


class ModelAnswer(BaseModel):
    """A provider's parsed answer plus the raw text it came from (kept, redacted, for review).
    ``usage`` is None when the provider reported none (the offline drafter calls no model)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    draft: Draft
    raw: str
    model: str
    usage: TokenUsage | None = None


@runtime_checkable
class Closable(Protocol):
    """A provider that holds a vendor SDK client (its connection pool): closed when its worker
    or command is done with it (``tollgate.runtime.models.close_providers``)."""

    async def aclose(self) -> None: ...


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
    usage: TokenUsage | None = None


@runtime_checkable
class TagProvider(Protocol):
    """Asks a model for tags for one saved item. Raises ``RetryableError`` on timeouts and 5xx,
    ``RateLimited`` on 429; reading the answer is the caller's job (tolerant parsing)."""

    name: str
    model: str

    async def suggest_tags(self, prompt: TagPrompt) -> TagReply: ...


class TriageAnswer(BaseModel):
    """A provider's triage of one message, parsed, with the raw text it came from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    proposal: TriageProposal
    raw: str
    model: str
    usage: TokenUsage | None = None


@runtime_checkable
class TriageProvider(Protocol):
    """Turns a rendered triage prompt (``policies.triage_prompt``) into a ``TriageProposal``;
    raises as ``DraftProvider.propose`` does (ADR 0044)."""

    name: str
    model: str

    async def triage(self, prompt: DraftPrompt) -> TriageAnswer: ...


class PostmortemAnswer(BaseModel):
    """A provider's postmortem draft of one incident packet, parsed (ADR 0046)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    postmortem: Postmortem
    raw: str
    model: str
    usage: TokenUsage | None = None


@runtime_checkable
class PostmortemProvider(Protocol):
    """Drafts a postmortem from a rendered ``policies.postmortem_prompt``; raises as
    ``DraftProvider.propose`` does. The validator (``policies.postmortem``) judges the answer."""

    name: str
    model: str

    async def postmortem(self, prompt: PostmortemPrompt) -> PostmortemAnswer: ...
