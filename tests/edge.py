"""A review decision sent as the edges send it (the review HTTP service, the CLI).

The workflow's update validator refuses a malformed, stale or unauthorised decision before
history, so the workflow records nothing for it; the edge that sent it audits the refusal in
PostgreSQL (``tollgate.ops.refusals``). Workflow tests that send decisions straight to a run use
this helper, so what they read back from ``review_decisions`` is what a reviewer's refusal leaves.
"""

from __future__ import annotations

import asyncpg
from temporalio.client import WorkflowHandle, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError

from contracts import ReviewAck, ReviewDecision
from tollgate.ops.refusals import record_validator_refusal


async def send_decision(handle: WorkflowHandle, decision: ReviewDecision, *,
                        database_url: str) -> ReviewAck:
    """The ``review`` update's answer; a validator refusal audited and answered as refused."""
    try:
        return await handle.execute_update("review", decision, result_type=ReviewAck)
    except WorkflowUpdateFailedError as exc:
        cause = exc.cause
        if not isinstance(cause, ApplicationError):
            raise
        code = cause.type or "refused"
        pool = await asyncpg.create_pool(database_url, min_size=1, max_size=1)
        try:
            assert await record_validator_refusal(pool, handle.id, decision, code), (
                f"{handle.id}: the refusal could not be audited (event unknown)")
        finally:
            await pool.close()
        return ReviewAck(accepted=False, state=await handle.query("state"),
                         message=cause.message, reason_code=code)
