"""One fenced write attempt at a target, shared by the execute step and the reconciler's resend.

The attempt takes a fence on the receipt, makes the one call, and settles the receipt with that
fence: SUCCEEDED with the target's id, UNKNOWN when the request may have landed, REJECTED on a
business refusal. Failures known to have happened before the write propagate untouched (the
receipt stays open and the activity's retry policy decides).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from adapters.base import ActionAdapter
from adapters.postgres_receipts import ReceiptStore
from contracts import ActionRequest, Receipt, ReceiptStatus
from contracts.errors import RejectedError, UnknownWrite


@dataclass(frozen=True)
class Attempt:
    status: Literal["succeeded", "unknown", "rejected"]
    receipt: Receipt
    reason_code: str | None = None


async def attempt_write(
    receipts: ReceiptStore, adapter: ActionAdapter, action: ActionRequest
) -> Attempt:
    fence = await receipts.begin_attempt(action.action_key)
    try:
        write = await adapter.execute(action)
    except UnknownWrite as exc:
        settled = await receipts.settle(action.action_key, ReceiptStatus.UNKNOWN, fence=fence,
                                        error_class=exc.error_class.value, error_code=exc.code)
        return Attempt("unknown", settled, exc.code)
    except RejectedError as exc:
        settled = await receipts.settle(action.action_key, ReceiptStatus.REJECTED, fence=fence,
                                        error_class=exc.error_class.value, error_code=exc.code)
        return Attempt("rejected", settled, exc.code)
    settled = await receipts.settle(action.action_key, ReceiptStatus.SUCCEEDED, fence=fence,
                                    external_id=write.external_id)
    return Attempt("succeeded", settled)
