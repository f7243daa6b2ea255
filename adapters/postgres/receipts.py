"""Receipts in PostgreSQL (kill switches and dead letters: ``ops.py``, ``dead_letters.py``).

A receipt row is written before a side effect and settled after it. Each attempt takes a fence
number; a settle carrying an older fence, or aimed at a receipt that is already final, changes
nothing, so a stale attempt can never overwrite a newer outcome.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import asyncpg

from adapters.ports.stores.receipts import OPENING_FENCE
from adapters.postgres.replay_settle import (
    FOLLOWS_TO,
    follow_found_settled,
    follow_replay,
    follow_sweep,
)
from adapters.postgres.steps import recorded_behind, step_args
from contracts import ActionRequest, Receipt, ReceiptStatus, StepRecord
from contracts.actions import ReplaySettle
from contracts.sweep import SweptEnd

RECEIPT_COLUMNS = (
    "action_key, tenant_id, event_id, adapter, action, request_fingerprint, status, external_id,"
    " error_class, error_code, attempts, policy_version, rollout_mode, created_at, updated_at"
)


_INSERT = (
    "INSERT INTO receipts (action_key, tenant_id, adapter, action, event_id,"
    " workflow_id, correlation_id, request_fingerprint, status, policy_version,"
    " rollout_mode, error_code{columns}) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12{values})"
    " ON CONFLICT (action_key) DO NOTHING"
)
#: $1-$12 (``receipt_args``); a key already held inserts nothing.
INSERT_RECEIPT_SQL = _INSERT.format(columns="", values="")
#: The same, for a receipt opened by the attempt about to send: the row starts as
#: ``begin_attempt`` would leave it (one attempt, that attempt's fence), which saves an audited
#: UPDATE per first send. Any later attempt still takes the next fence.
INSERT_ATTEMPTED_RECEIPT_SQL = _INSERT.format(columns=", attempts, fence",
                                              values=f", 1, {OPENING_FENCE}")


#: $1 key, $2 status, $3 external id, $4 error class, $5 error code, $6 fence (None: any).
SETTLE_SQL = (
    "UPDATE receipts SET status = $2, external_id = COALESCE($3, external_id),"
    " error_class = $4, error_code = $5, updated_at = now()"
    " WHERE action_key = $1 AND status IN ('PENDING', 'UNKNOWN')"
    f" AND ($6::int IS NULL OR fence = $6) RETURNING {RECEIPT_COLUMNS}"
)

_OUTCOME = "$11::jsonb"
_RECEIPT_KEY = "COALESCE($10, e.receipt_key)"
#: ``SETTLE_SQL`` with the run's final step behind it (``recorded_behind``): the step is
#: written only when the settle won its fence, its outcome's receipt and the events row's
#: ``receipt_key`` taken from the settled row (the caller passes the outcome without one).
SETTLE_AND_RECORD_SQL = recorded_behind(SETTLE_SQL).replace(
    _OUTCOME, "($11::jsonb || jsonb_build_object('receipt', (SELECT to_jsonb(rc) FROM rc)))"
).replace(_RECEIPT_KEY, "COALESCE((SELECT action_key FROM rc), $10, e.receipt_key)")
assert recorded_behind(SETTLE_SQL).count(_OUTCOME) == 2
assert recorded_behind(SETTLE_SQL).count(_RECEIPT_KEY) == 1


#: A dead letter (``d``) of the receipt's write that awaits a person: it ended the write STOPPED
#: (the reconciler gave up on it, or ``ops close --unresolved-write`` on the reconciler's
#: evidence) and is OPEN, or APPROVED and not replayed yet (ADR 0059). A send step's dead letter
#: (DEAD_LETTERED) is not one: no lookup ran for its receipt, the sweep's is the first.
_AWAITING = "d.state = 'STOPPED' AND d.status IN ('OPEN', 'APPROVED')"
#: A dead letter a person closed (``tollgate ops dlq close``; a replay that found the receipt
#: SUCCEEDED closes one too, but then the receipt is no longer open), whatever step wrote it: the
#: write stays unknown, and it is off the books for good (ADR 0060).
_CLOSED = "d.status = 'CLOSED'"


def _a_dead_letter(where: str) -> str:
    return ("EXISTS (SELECT 1 FROM dead_letters d WHERE d.action_key = r.action_key"
            f" AND ({where}))")


#: True for a receipt (``r``) moved aside: a dead letter of its action key awaits a person
#: (``_AWAITING``) or a person closed one (``_CLOSED``). The receipt stays open (nobody knows
#: whether the write was sent), but it is not an open unknown write on ``ops status`` and the
#: sweep leaves it; a replay (REPLAYED) makes it live again, a close never does (ADRs 0059,
#: 0060). The one rule both readers use; ``AWAITING_A_PERSON_SQL`` only splits what it holds.
MOVED_ASIDE_SQL = _a_dead_letter(f"{_AWAITING} OR {_CLOSED}")
#: The part of ``MOVED_ASIDE_SQL`` whose dead letter still awaits a person (``ops status``
#: counts those under dead letters waiting); the rest were closed by hand.
AWAITING_A_PERSON_SQL = _a_dead_letter(_AWAITING)


def receipt_args(request: ActionRequest, fingerprint: str, *, mode: str | None,
                 status: ReceiptStatus, reason_code: str | None) -> tuple[Any, ...]:
    ref = request.ref
    return (request.action_key, ref.tenant_id, request.adapter, request.action, ref.event_id,
            ref.workflow_id, ref.correlation_id, fingerprint, status.value,
            request.policy_version, mode, reason_code)


def _receipt(row: asyncpg.Record) -> Receipt:
    return Receipt(**dict(row))


class ReceiptStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def open_receipt(self, request: ActionRequest, fingerprint: str, *,
                           mode: str | None = None,
                           status: ReceiptStatus = ReceiptStatus.PENDING,
                           reason_code: str | None = None) -> Receipt:
        """Insert a receipt for the key (PENDING, or WOULD_SEND when the rollout mode holds
        the send back, with why in ``error_code``), or return the one already there."""
        row = await self.pool.fetchrow(
            f"{INSERT_RECEIPT_SQL} RETURNING {RECEIPT_COLUMNS}",
            *receipt_args(request, fingerprint, mode=mode, status=status,
                          reason_code=reason_code),
        )
        # A separate read on conflict: within the INSERT's own statement a row committed by a
        # concurrent insert of the same key is not visible yet.
        if row is not None:
            return _receipt(row)
        receipt = await self.get(request.action_key)
        assert receipt is not None
        return receipt

    async def begin_attempt(self, action_key: str) -> int:
        """Count an attempt and return its fence (only attempts on an open receipt count).

        On a PENDING receipt it clears the previous attempt's error: an attempt in flight has
        no outcome yet, so a "nothing was sent" note from before never vouches for this one. An
        UNKNOWN receipt keeps the error that made it unknown."""
        fence = await self.pool.fetchval(
            "UPDATE receipts SET attempts = attempts + 1, fence = fence + 1, updated_at = now(),"
            " error_class = CASE WHEN status = 'PENDING' THEN NULL ELSE error_class END,"
            " error_code = CASE WHEN status = 'PENDING' THEN NULL ELSE error_code END"
            " WHERE action_key = $1 AND status IN ('PENDING', 'UNKNOWN') RETURNING fence",
            action_key,
        )
        return int(fence) if fence is not None else -1

    async def settle(
        self,
        action_key: str,
        status: ReceiptStatus,
        *,
        fence: int | None,
        external_id: str | None = None,
        error_class: str | None = None,
        error_code: str | None = None,
        replay: ReplaySettle | None = None,
    ) -> Receipt:
        """Move an open receipt to ``status``; a stale fence or a final receipt wins nothing.
        ``fence=None`` is the reconciler's settle: it holds no attempt of its own. ``replay``:
        a dead letter's replay settles it, and the event that dead letter stopped follows a
        final receipt (whoever settled it) in the same transaction (ADR 0061)."""
        args = (action_key, status.value, external_id, error_class, error_code, fence)
        if replay is None:
            row = await self.pool.fetchrow(SETTLE_SQL, *args)
            return _receipt(row) if row is not None else await self._standing(action_key)
        async with self.pool.acquire() as conn, conn.transaction():
            row = await conn.fetchrow(SETTLE_SQL, *args)
            receipt = _receipt(row) if row is not None else await self._standing(action_key, conn)
            await follow_replay(conn, receipt, replay)
        return receipt

    async def settle_swept(self, action_key: str, *,
                           external_id: str) -> tuple[Receipt, SweptEnd | None]:
        """The receipt sweep's settle: the target holds the write (``external_id``), so
        SUCCEEDED; the event its dead letter stopped (or its send step dead-lettered) follows
        it and that write's dead letters close, in the same transaction (ADRs 0063, 0065). A
        receipt settled meanwhile stands. Returns the receipt and what followed, if anything."""
        async with self.pool.acquire() as conn, conn.transaction():
            row = await conn.fetchrow(SETTLE_SQL, action_key, ReceiptStatus.SUCCEEDED.value,
                                      external_id, None, None, None)
            receipt = _receipt(row) if row is not None else await self._standing(action_key, conn)
            end = await follow_sweep(conn, receipt)
        return receipt, end

    async def close_found_settled(self, dead_letter: int, action_key: str, *,
                                  operator: str) -> Receipt | None:
        """A replay of ``dead_letter`` by ``operator`` finding its receipt already settled
        (SUCCEEDED, or REJECTED: the target's final no) runs nothing: the dead letter closes
        and the event it stopped follows the receipt, in one transaction (ADR 0063). Returns
        that receipt; None (nothing written) when the receipt is open: the replay runs."""
        async with self.pool.acquire() as conn, conn.transaction():
            receipt = await self.get(action_key, conn, lock=True)
            if receipt is None or receipt.status not in FOLLOWS_TO:
                return None
            await follow_found_settled(conn, receipt, dead_letter, operator)
        return receipt

    async def settle_closing(self, action_key: str, status: ReceiptStatus, *,
                             fence: int | None, step: StepRecord,
                             external_id: str | None = None, error_class: str | None = None,
                             error_code: str | None = None) -> tuple[Receipt, bool]:
        """``settle``, and when it wins, the run's final ``step`` in the same statement, its
        outcome carrying the settled receipt: one round trip and one commit (ADR 0057). A lost
        fence records nothing: the attempt that won it settles, the run records its own end."""
        row = await self.pool.fetchrow(
            SETTLE_AND_RECORD_SQL, *step_args(step),
            action_key, status.value, external_id, error_class, error_code, fence)
        assert row is not None  # one row, whether or not the settle won
        if row["receipt"] is None:
            return await self._standing(action_key), False
        return Receipt.model_validate_json(row["receipt"]), True

    async def _standing(self, action_key: str, conn: Any = None) -> Receipt:
        # The fence lost: the newer outcome stands (read in ``conn``'s transaction if given).
        receipt = await self.get(action_key, conn)
        assert receipt is not None
        return receipt

    async def record_sweep(self, checked: int, settled: int, still_open: int,
                           drift_missing: int) -> None:
        """One audit row per sweep run: counts only (the report's keys stay in the history)."""
        detail = {"checked": checked, "settled_found_at_target": settled,
                  "still_open": still_open, "drift_missing_at_target": drift_missing}
        await self.pool.execute(
            "INSERT INTO audit (actor, action, target, detail) VALUES ($1, $2, $3, $4::jsonb)",
            "receipt-sweep", "receipt_sweep", "receipts", json.dumps(detail))

    async def get(self, action_key: str, conn: Any = None, *,
                  lock: bool = False) -> Receipt | None:
        """``lock``: hold the row until ``conn``'s transaction ends (before an events row)."""
        row = await (conn or self.pool).fetchrow(
            f"SELECT {RECEIPT_COLUMNS} FROM receipts WHERE action_key = $1"
            + (" FOR UPDATE" if lock else ""), action_key
        )
        return _receipt(row) if row else None

    async def stale_open(self, older_than: datetime, limit: int) -> list[dict[str, Any]]:
        """Open receipts untouched since ``older_than``, oldest first; none moved aside
        (``MOVED_ASIDE_SQL``): a dead letter's, they would be reported open sweep after sweep."""
        rows = await self.pool.fetch(
            "SELECT action_key, adapter FROM receipts r WHERE status IN ('PENDING', 'UNKNOWN')"
            f" AND updated_at < $1 AND NOT {MOVED_ASIDE_SQL} ORDER BY updated_at LIMIT $2",
            older_than, limit,
        )
        return [dict(r) for r in rows]

    async def young_open(self, older_than: datetime) -> int:
        """Open receipts changed since ``older_than`` (none moved aside): the ones a sweep
        leaves alone for now, so its "0 still open" is not read as "no write is unknown"."""
        return int(await self.pool.fetchval(
            "SELECT count(*) FROM receipts r WHERE status IN ('PENDING', 'UNKNOWN')"
            f" AND updated_at >= $1 AND NOT {MOVED_ASIDE_SQL}", older_than))

    async def recent_succeeded(self, limit: int) -> list[dict[str, Any]]:
        rows = await self.pool.fetch(
            "SELECT action_key, adapter, tenant_id FROM receipts WHERE status = 'SUCCEEDED'"
            " ORDER BY updated_at DESC LIMIT $1", limit,
        )
        return [dict(r) for r in rows]
