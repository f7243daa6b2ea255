"""Receipts: one fenced write attempt, settling, the reconciler's ledger, the send step's
opening, and the sweep that settles what the target already holds (``activities.attempt``,
``activities.reconcile``, ``activities.execute``, ``activities.sweep``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

from contracts import ActionRequest, Receipt, ReceiptStatus, StepRecord
from contracts.actions import ReplaySettle
from contracts.sweep import SweptEnd

#: The fence of the attempt that opened its receipt (``SendStore.open_and_record``): the
#: receipt is written with that attempt already counted, as ``begin_attempt`` would leave it.
OPENING_FENCE = 1


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
