"""The send step and what guards a send: its reads before sending, opening its receipt with the
step recorded, the action token's single use, and what the reconciler's keyed resend verifies
again (``activities.execute``, ``activities.action_token``, ``activities.resend_guard``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from adapters.ports.stores.events import StepRecorder
from contracts import ActionRequest, Receipt, StepRecord


@dataclass(frozen=True)


class SendReads:
    """What the send step reads before it sends, in one round trip."""

    #: A kill switch row covers the pair and is closed or counting a canary.
    switch_row: bool
    #: An accepted approval of this draft version is on record.
    approved: bool
    #: The receipt already held for the action key, if any.
    receipt: Receipt | None
    #: The covering rollout row (``RolloutGate.decide_row``'s input), if any.
    rollout: dict[str, Any] | None
    #: The text of this draft version as PostgreSQL holds it (what the action token's
    #: fingerprint is recomputed from), None when there is no such draft.
    draft_body: str | None = None


class SendStore(StepRecorder, Protocol):
    async def read_before_send(self, *, tenant_id: str, adapter: str, workflow_id: str,
                               draft_version: int, action_key: str) -> SendReads: ...

    async def open_and_record(self, request: ActionRequest, fingerprint: str, *,
                              mode: str | None, step: StepRecord,
                              would_send: str | None = None) -> Receipt | None:
        """Open a PENDING receipt with the caller's attempt counted (attempts 1, fence
        ``OPENING_FENCE``), or with ``would_send`` (the rollout's reason code) a final
        WOULD_SEND one counting none, and record ``step`` together; None when the key was
        held."""
        ...


class ActionTokenUses(Protocol):
    """The action token's store (``activities.action_token``, ``activities.execute``)."""

    async def has_approval(self, workflow_id: str, draft_version: int) -> bool: ...

    async def first_use(self, token_id: str, action_key: str, use_id: str) -> bool:
        """True when ``use_id`` holds the token (now or from an earlier attempt of it)."""
        ...


class ResendChecks(Protocol):
    """What the reconciler's keyed resend verifies again (``activities.resend_guard``)."""

    async def approved_draft(self, workflow_id: str, draft_version: int) -> tuple[bool, str | None]:
        """(an accepted approval of that version is on record, the draft's text or None)."""
        ...

    async def used_by(self, token_id: str, action_key: str, use_id: str) -> bool:
        """True when the token's single use is held by ``use_id`` for ``action_key``."""
        ...
