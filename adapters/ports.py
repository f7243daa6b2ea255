"""Ports: what the activities need from the outside world, as Protocols.

Implementations live one file per real system (``crm_http.py``, ``messaging_http.py``,
``openai_draft.py``...). Adapters never import ``temporalio``; they raise the taxonomy's
exceptions from ``contracts.errors`` and the activities turn those into Temporal failures.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from contracts import ActionRequest, CustomerRecord, Draft, DraftPrompt
from contracts.tagging import TagPrompt


class TargetWrite(BaseModel):
    """What a target says about one write it holds: its own id for it and when it took it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    idempotency_key: str
    external_id: str
    status: str = "accepted"


@runtime_checkable
class ContextSource(Protocol):
    """Reads the minimal record for an entity from its system of record.

    Returns None when the source has no such record; raises ``RetryableError`` (or
    ``RateLimited``) when the source cannot answer now.
    """

    async def fetch_customer(self, tenant_id: str, customer_id: str) -> CustomerRecord | None: ...


@runtime_checkable
class ActionAdapter(Protocol):
    """Performs one side effect at a target, keyed by a stable idempotency key.

    ``execute`` raises ``TimeoutBeforeWrite`` when nothing reached the target, ``UnknownWrite``
    when the request left but no answer came back (timeout, 502, 504), ``RateLimited`` on 429,
    ``RejectedError`` on a business 4xx and ``RetryableError`` on other 5xx. ``lookup`` returns the
    write the target holds for a key, or None.
    """

    name: str
    dedupes_by_key: bool
    supports_lookup: bool

    async def execute(self, request: ActionRequest) -> TargetWrite: ...

    async def lookup(self, idempotency_key: str) -> TargetWrite | None: ...


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
