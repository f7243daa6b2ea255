"""Store ports: what each activity asks of the PostgreSQL stores, named by the role it gives them.

Each Protocol holds only the methods its activities call; the stores in ``adapters/postgres/``
match several at once (``PostgresStore`` is the activities' ``StepStore``, ``EventGate``,
``ReviewStore`` and ``SendStore``). The result types a store hands back live here with the
port, so an activity reads them without importing the store.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from contracts import (
    ActionRequest,
    EventEnvelope,
    EventRef,
    EventState,
    Receipt,
    ReceiptStatus,
    ReviewDecision,
    StepRecord,
)
from contracts.actions import ReplaySettle
from contracts.contacts import TenantContact
from contracts.fanout import BusinessEvent
from contracts.rollout import RolloutDecision
from contracts.sweep import SweptEnd
from contracts.tagging import (
    AppliedTag,
    ApplyTagsRequest,
    JobFailure,
    JobState,
    TaggingInput,
    TagJob,
)

if TYPE_CHECKING:
    # A consumer writes on the delivery's own connection, so that its write and the delivery
    # record commit together: this port is a PostgreSQL transaction's, and says so.
    from asyncpg.pool import PoolConnectionProxy

# --- event state: steps, intake, review, the send step's reads ------------------------------


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


#: The fence of the attempt that opened its receipt (``SendStore.open_and_record``): the
#: receipt is written with that attempt already counted, as ``begin_attempt`` would leave it.
OPENING_FENCE = 1


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


class ContactBook(Protocol):
    """A tenant's own contact points (``activities.context``; ADR 0039)."""

    async def tenant_contacts(self, tenant_id: str) -> list[TenantContact]: ...


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


# --- receipts --------------------------------------------------------------------------------


class ReceiptSettler(Protocol):
    async def settle(self, action_key: str, status: ReceiptStatus, *, fence: int | None,
                     external_id: str | None = None, error_class: str | None = None,
                     error_code: str | None = None,
                     replay: ReplaySettle | None = None) -> Receipt:
        """``fence=None`` settles without an attempt of its own (the reconciler).
        ``replay``: a dead letter's replay settles it; a final receipt then ends the event
        that dead letter stopped, in the same transaction (ADR 0061)."""
        ...


class ReceiptAttempts(ReceiptSettler, Protocol):
    """What one fenced write attempt needs (``activities.attempt``)."""

    async def begin_attempt(self, action_key: str) -> int: ...

    async def settle_closing(self, action_key: str, status: ReceiptStatus, *,
                             fence: int | None, step: StepRecord,
                             external_id: str | None = None, error_class: str | None = None,
                             error_code: str | None = None) -> tuple[Receipt, bool]:
        """``settle``, and when it wins, ``step`` recorded with it, its outcome carrying the
        settled receipt (ADR 0057); True when the step was recorded."""
        ...


class ReceiptLedger(ReceiptAttempts, Protocol):
    """The reconciler's receipts: attempts, plus reading the one a key holds."""

    async def get(self, action_key: str) -> Receipt | None: ...


class SendReceipts(ReceiptLedger, Protocol):
    """The send step's receipts: the ledger, plus opening one."""

    async def open_receipt(self, request: ActionRequest, fingerprint: str, *,
                           mode: str | None = None,
                           status: ReceiptStatus = ReceiptStatus.PENDING,
                           reason_code: str | None = None) -> Receipt: ...


class ReceiptSweep(Protocol):
    async def stale_open(self, older_than: datetime, limit: int) -> list[dict[str, Any]]: ...

    async def settle_swept(self, action_key: str, *,
                           external_id: str) -> tuple[Receipt, SweptEnd | None]:
        """SUCCEEDED, the target holding ``external_id``; the event a dead letter of the write
        ended follows and those dead letters close, in one transaction (ADRs 0063, 0065).
        Returns the receipt and what followed (None: nothing did)."""
        ...

    async def recent_succeeded(self, limit: int) -> list[dict[str, Any]]: ...

    async def record_sweep(self, checked: int, settled: int, still_open: int,
                           drift_missing: int) -> None: ...


# --- operator controls: switches, rollout, the circuit, dead letters -------------------------


class SwitchBoard(Protocol):
    async def pass_switch(self, adapter: str, tenant_id: str, *,
                          row_seen: bool = False) -> str | None:
        """Let one action through: why not (a closed switch), or None."""
        ...


class RolloutGate(Protocol):
    async def decide_row(self, row: dict[str, Any] | None, event_id: str,
                         action_key: str) -> RolloutDecision: ...


#: The circuit's signal kinds -> the rule name the audit row and the switch's reason give.
RULES: Mapping[str, str] = {"unknown_write": "unknown_writes", "duplicate": "duplicates"}


@dataclass(frozen=True)
class CircuitCount:
    """The signals counted in the window, and whether this one closed the switch."""

    count: int
    tripped: bool


class CircuitCounter(Protocol):
    async def signal(self, *, adapter: str, tenant_id: str, kind: str, key: str, limit: int,
                     window: timedelta, policy_version: str | None) -> CircuitCount:
        """Record one signal of ``kind`` (a key of ``RULES``); a repeated key counts once."""
        ...


class DeadLetterQueue(Protocol):
    async def dead_letter(
        self, *, workflow_id: str, error_class: str, error_code: str, state: str, owner: str,
        replay_plan: str, redacted_payload: dict[str, Any] | None, tenant_id: str | None,
        event_id: str | None, correlation_id: str | None, action_key: str | None = None,
        replay_input: dict[str, Any] | None = None, step: StepRecord | None = None,
    ) -> None: ...


# --- fan-out and tagging ---------------------------------------------------------------------


@runtime_checkable
class EventConsumer(Protocol):
    """One consumer of a business event. ``down`` is the fault switch the tests and the demo
    flip: a down consumer raises ``RetryableError`` before touching anything."""

    name: str
    down: bool

    async def apply(self, conn: PoolConnectionProxy, event: BusinessEvent) -> None: ...


class FanOutLedger(Protocol):
    async def deliver(self, event: BusinessEvent, consumer: EventConsumer,
                      attempt: int) -> Literal["delivered", "duplicate"]: ...

    async def dead_letter(self, event: BusinessEvent, consumer: str, retry_state: str,
                          error: str) -> None: ...


class TagJobStore(Protocol):
    async def claim(self, item_id: int, attempt: int) -> TaggingInput: ...

    async def apply_tags(self, request: ApplyTagsRequest,
                         threshold: float) -> list[AppliedTag]: ...

    async def record_failure(self, failure: JobFailure) -> JobState: ...

    async def get_job(self, item_id: int) -> TagJob | None: ...
