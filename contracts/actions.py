"""Step 6: one business action, its receipt and the reconciler's answer."""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import StringConstraints

from contracts.base import EventRef, Frozen


class ReceiptStatus(StrEnum):
    PENDING = "PENDING"
    SUCCEEDED = "SUCCEEDED"
    REJECTED = "REJECTED"
    UNKNOWN = "UNKNOWN"


class ActionRequest(Frozen):
    """One business action. ``action_key`` derives from business data only
    (``policies.keys.action_key``), never from a run id."""

    ref: EventRef
    adapter: str
    action: str
    action_key: str
    channel: str
    body: Annotated[str, StringConstraints(min_length=1, max_length=1000)]
    policy_version: str
    approved_by: str


class Receipt(Frozen):
    action_key: str
    tenant_id: str
    event_id: str
    adapter: str
    action: str
    request_fingerprint: str
    status: ReceiptStatus
    external_id: str | None = None
    error_class: str | None = None
    error_code: str | None = None
    attempts: int = 0
    policy_version: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None


class ExecuteRequest(Frozen):
    action: ActionRequest
    draft_version: int
    seq: int


class ExecuteResult(Frozen):
    """``held``: a kill switch covers this adapter/tenant; nothing was sent, try again later."""

    status: Literal["succeeded", "rejected", "unknown", "stopped", "held"]
    receipt: Receipt | None = None
    reason_code: str | None = None


class ReconcileRequest(Frozen):
    ref: EventRef
    action: ActionRequest
    lookup_window: timedelta = timedelta(minutes=10)


class ReconcileResult(Frozen):
    status: Literal["succeeded", "resent", "stopped", "rejected"]
    receipt: Receipt | None = None
    attempts: int = 0
    reason_code: str | None = None
