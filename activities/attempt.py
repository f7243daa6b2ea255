"""One fenced write attempt at a target, shared by the execute step and the reconciler's resend.

The attempt takes a fence on the receipt, makes the one call, and settles the receipt with that
fence: SUCCEEDED with the target's id, UNKNOWN when the request may have landed, REJECTED on a
business refusal. An attempt that opened the receipt itself already holds its fence (the
receipt was written with that attempt counted: ``SendStore.open_and_record``) and takes none;
any other attempt, a retry or a concurrent one, takes the next fence, so the opener's settle
then loses as a stale attempt's always does.

Failures known to have happened before the write (connection refused, 429) propagate (the
activity's retry policy decides); on a receipt that was PENDING they also leave their error
class on it, which says "this attempt sent nothing". The next attempt clears that note when it
begins, so it only ever speaks for the last attempt (``sent_nothing_yet``); a receipt opened by
its attempt starts without one. An UNKNOWN receipt is never noted: an earlier attempt may have
landed.

A send of the settle-closes shape (ADR 0057) passes ``closing``: a final settle (SUCCEEDED,
REJECTED) then records the run's final step in the settle's own statement, and only when that
settle won its fence; the run then records nothing itself (``Attempt.closed``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from adapters.ports.stores.receipts import ReceiptAttempts
from adapters.ports.targets import ActionAdapter
from contracts import ActionRequest, Receipt, ReceiptStatus, StepRecord
from contracts.actions import ReplaySettle
from contracts.errors import (
    ErrorClass,
    RateLimited,
    RejectedError,
    TimeoutBeforeWrite,
    UnknownWrite,
)

#: The reason code of a success the target answered with a key it already held (a 409).
ALREADY_HELD = "already_held_at_target"
#: Outcomes that prove the request never reached the target.
_SENT_NOTHING = frozenset({ErrorClass.TIMEOUT_BEFORE_WRITE.value, ErrorClass.RATE_LIMITED.value})


#: The run's final step after a final settle: (status, reason code) to the step, its outcome
#: without the receipt, which the store adds from the settled row (``closing_step``).
Closing = Callable[[str, str | None], StepRecord | None]


@dataclass(frozen=True)
class Attempt:
    status: Literal["succeeded", "unknown", "rejected"]
    receipt: Receipt
    reason_code: str | None = None
    #: The run's final step was recorded with the settle (``closing`` given, its fence won).
    closed: bool = False


async def attempt_write(
    receipts: ReceiptAttempts, adapter: ActionAdapter, action: ActionRequest, *,
    from_pending: bool = False, fence: int | None = None, closing: Closing | None = None,
    replay: ReplaySettle | None = None,
) -> Attempt:
    """``from_pending``: the receipt was PENDING before this attempt (see the module doc).
    ``fence``: the one this attempt holds from opening the receipt; None takes a new one.
    ``closing``: the run's final step, recorded with a final settle (the module doc).
    ``replay``: a dead letter's replay resends; its event follows a final settle (ADR 0061)."""
    if fence is None:
        fence = await receipts.begin_attempt(action.action_key)
    try:
        write = await adapter.execute(action)
    except (TimeoutBeforeWrite, RateLimited) as exc:
        if from_pending:
            await receipts.settle(action.action_key, ReceiptStatus.PENDING, fence=fence,
                                  error_class=exc.error_class.value, error_code=exc.code)
        raise
    except UnknownWrite as exc:
        settled = await receipts.settle(action.action_key, ReceiptStatus.UNKNOWN, fence=fence,
                                        error_class=exc.error_class.value, error_code=exc.code)
        return Attempt("unknown", settled, exc.code)
    except RejectedError as exc:
        return await settle_final(receipts, action.action_key, "rejected", exc.code, fence,
                                  closing, error_class=exc.error_class.value,
                                  error_code=exc.code, replay=replay)
    return await settle_final(receipts, action.action_key, "succeeded",
                              ALREADY_HELD if write.status == "already_held" else None, fence,
                              closing, external_id=write.external_id, replay=replay)


async def settle_final(receipts: ReceiptAttempts, action_key: str,
                       status: Literal["succeeded", "rejected"], reason_code: str | None,
                       fence: int | None, closing: Closing | None, *,
                       external_id: str | None = None, error_class: str | None = None,
                       error_code: str | None = None,
                       replay: ReplaySettle | None = None) -> Attempt:
    """Settle the receipt ``status`` (SUCCEEDED or REJECTED) with ``fence``; with ``closing``,
    the run's final step in the same statement when the settle wins; with ``replay``, the
    end of the event its dead letter stopped (``ReceiptSettler.settle``)."""
    final = ReceiptStatus.SUCCEEDED if status == "succeeded" else ReceiptStatus.REJECTED
    if closing is None:
        settled = await receipts.settle(action_key, final, fence=fence, external_id=external_id,
                                        error_class=error_class, error_code=error_code,
                                        replay=replay)
        return Attempt(status, settled, reason_code)
    step = closing(status, reason_code)
    assert step is not None  # a final status always ends the run
    settled, closed = await receipts.settle_closing(
        action_key, final, fence=fence, step=step, external_id=external_id,
        error_class=error_class, error_code=error_code)
    return Attempt(status, settled, reason_code, closed=closed)


def sent_nothing_yet(receipt: Receipt) -> bool:
    """True when the receipt's last attempt is known to have sent nothing.

    The execute step sends again to a target that does not dedupe only after such an attempt,
    so by induction no earlier attempt sent anything either.
    """
    return receipt.status == ReceiptStatus.PENDING and receipt.error_class in _SENT_NOTHING
