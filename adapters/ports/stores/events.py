"""Event state: what the steps, the idempotency gate, review and the context read ask of the
stores (``activities.steps``, ``activities.intake``, ``activities.review``,
``activities.context``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol

from contracts import EventEnvelope, EventRef, EventState, ReviewDecision, StepRecord
from contracts.contacts import TenantContact


class StepRecorder(Protocol):
    async def record_step(self, step: StepRecord) -> bool:
        """One transition plus the step's own write; False when it was already recorded."""
        ...


class StepStore(StepRecorder, Protocol):
    async def recorded_at(self, step: StepRecord) -> datetime | None:
        """When this very step was recorded (same transitions under its numbers, same
        accepted decision), by the store's clock; None when it was not."""
        ...

    async def record_refused_decision(
        self, *, ref: EventRef, number: int, decision: ReviewDecision, refusal_code: str,
        policy_version: str | None,
    ) -> None: ...


@dataclass(frozen=True)


class Admission:
    """The idempotency gate's answer for one event, and the state the key's event is in."""

    status: Literal["new", "existing", "conflict", "superseded"]
    state: EventState
    outcome: dict[str, Any] | None = None


class EventGate(Protocol):
    async def admit_event(self, *, workflow_id: str, run_id: str, event: EventEnvelope,
                          fingerprint: str, received_at: datetime,
                          supersede: bool = True) -> Admission: ...

    async def quarantine(self, *, workflow_id: str, reason_code: str, detail: str,
                         redacted_payload: dict[str, Any] | None, received_at: datetime,
                         tenant_id: str | None = None, event_id: str | None = None) -> None: ...

    async def count_duplicate(self, *, tenant_id: str, channel: str, stage: str) -> None: ...


class ReviewStore(Protocol):
    async def count_gate_inputs(self, *, tenant_id: str, entity_id: str, adapter: str,
                                action: str, as_of: datetime, workflow_id: str,
                                sent_before: datetime | None = None) -> tuple[int, int]:
        """(sends of this action to this customer in 24 h, the tenant's overdue reviews);
        with ``sent_before`` (a store time), the sends of the 24 h before it only."""
        ...

    async def open_review(self, step: StepRecord, review_due_at: datetime) -> bool: ...

    async def record_escalation(self, *, dedupe_key: str, target: str,
                                detail: dict[str, Any]) -> bool: ...


class ContactBook(Protocol):
    """A tenant's own contact points (``activities.context``; ADR 0039)."""

    async def tenant_contacts(self, tenant_id: str) -> list[TenantContact]: ...
