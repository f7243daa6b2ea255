"""What the send step reads before it sends, in one round trip (issue 16).

``execute_action`` used to ask four questions one statement each: is a kill switch row in the
way, is the approval on record, is there a receipt for the key already, which rollout mode
covers (tenant, adapter). None of the answers needs a lock to be read, so one statement reads
them all; whatever must change a row (a canary switch counting down, a canary rollout slot)
still goes through its store's own locked transaction (``OpsStore.pass_switch``,
``RolloutStore.decide_row``), and only when this read found such a row.
"""

from __future__ import annotations

import json

import asyncpg

from adapters.ports.stores.sending import SendReads
from adapters.postgres.receipts import (
    INSERT_ATTEMPTED_RECEIPT_SQL,
    INSERT_RECEIPT_SQL,
    RECEIPT_COLUMNS,
    receipt_args,
)
from adapters.postgres.rollout import COVERING_SQL
from adapters.postgres.steps import recorded_behind, step_args
from contracts import ActionRequest, Receipt, ReceiptStatus, StepRecord

#: $1 tenant, $2 adapter (as in ``COVERING_SQL``), $3 workflow id, $4 draft version, $5 action
#: key. The switch test is ``OpsStore.pass_switch``'s fast path, the approval test
#: ``has_approval``'s, the receipt ``ReceiptStore.get``'s row, the rollout row ``RolloutStore``'s.
SEND_READS_SQL = f"""
SELECT
  EXISTS (SELECT 1 FROM kill_switches WHERE adapter IN ($2, '*') AND tenant_id IN ($1, '*')
          AND (closed OR canary_remaining IS NOT NULL)) AS switch_row,
  EXISTS (SELECT 1 FROM review_decisions WHERE workflow_id = $3 AND draft_version = $4
          AND decision = 'approve' AND accepted) AS approved,
  (SELECT to_jsonb(r) FROM (SELECT {RECEIPT_COLUMNS} FROM receipts
                            WHERE action_key = $5) r) AS receipt,
  (SELECT to_jsonb(m) FROM ({COVERING_SQL}) m) AS rollout,
  (SELECT draft->>'message' FROM drafts WHERE workflow_id = $3 AND version = $4) AS draft_body
"""


async def read_before_send(pool: asyncpg.Pool, *, tenant_id: str, adapter: str,
                           workflow_id: str, draft_version: int, action_key: str) -> SendReads:
    row = await pool.fetchrow(SEND_READS_SQL, tenant_id, adapter, workflow_id, draft_version,
                              action_key)
    assert row is not None  # no FROM: always one row
    return SendReads(
        switch_row=bool(row["switch_row"]),
        approved=bool(row["approved"]),
        receipt=Receipt.model_validate_json(row["receipt"]) if row["receipt"] else None,
        rollout=json.loads(row["rollout"]) if row["rollout"] else None,
        draft_body=row["draft_body"],
    )


#: ``TRANSITION_SQL`` behind ``INSERT_ATTEMPTED_RECEIPT_SQL`` (``recorded_behind``): the steps
#: run only when this statement inserted the receipt, inserted with the opener's attempt
#: counted: its send needs no ``begin_attempt`` of its own.
OPEN_AND_RECORD_SQL = recorded_behind(
    f"{INSERT_ATTEMPTED_RECEIPT_SQL}\n    RETURNING {RECEIPT_COLUMNS}")
#: The same behind ``INSERT_RECEIPT_SQL``: a final WOULD_SEND receipt (the rollout mode held the
#: send back) counts no attempt, and its EXECUTING step is recorded with it, so the STOPPED the
#: run records next follows it with no gap in the numbers (docs/rollout.md).
OPEN_WOULD_SEND_AND_RECORD_SQL = recorded_behind(
    f"{INSERT_RECEIPT_SQL}\n    RETURNING {RECEIPT_COLUMNS}")


async def open_and_record(pool: asyncpg.Pool, request: ActionRequest, fingerprint: str, *,
                          mode: str | None, step: StepRecord,
                          would_send: str | None = None) -> Receipt | None:
    """Open a PENDING receipt and record ``step`` in one round trip, the caller's attempt
    already counted (attempts 1, fence ``OPENING_FENCE``: the caller sends without
    ``begin_attempt``); with ``would_send`` (the rollout's reason code), a final WOULD_SEND
    receipt instead, no attempt counted. None when the key was already held (a concurrent
    attempt opened it): then nothing was written, and the caller reads that receipt, records
    the step itself and takes a fence of its own."""
    sql, status = ((OPEN_AND_RECORD_SQL, ReceiptStatus.PENDING) if would_send is None
                   else (OPEN_WOULD_SEND_AND_RECORD_SQL, ReceiptStatus.WOULD_SEND))
    row = await pool.fetchrow(
        sql, *step_args(step),
        *receipt_args(request, fingerprint, mode=mode, status=status, reason_code=would_send))
    assert row is not None
    return Receipt.model_validate_json(row["receipt"]) if row["receipt"] else None
