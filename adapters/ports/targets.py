"""Target ports: the system of record an activity reads, and the targets it writes to.

Implementations: ``adapters/http/crm.py`` (``ContextSource``), ``adapters/http/messaging.py``
(``ActionAdapter``).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from contracts import ActionRequest, CustomerRecord


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
