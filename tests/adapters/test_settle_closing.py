"""A send of the settle-closes shape (ADR 0057) records its run's final step in the transaction
of the receipt's final settle, in real PostgreSQL: one commit for both, and only when the settle
wins its fence; an unknown write records no end."""

from __future__ import annotations

import asyncpg
import pytest

from activities.attempt import Closing, attempt_write
from adapters.ports.stores.receipts import OPENING_FENCE
from adapters.ports.targets import TargetWrite
from adapters.postgres.execute import open_and_record
from adapters.postgres.receipts import ReceiptStore
from contracts import ActionRequest, EventState, Receipt, ReceiptStatus, SendClosing, StepRecord
from contracts.errors import UnknownWrite
from contracts.review import closing_step
from tests.adapters.postgres_execute_support import (
    Target,
    action,
    executing,
    pool,
)

__all__ = ["pool"]  # the fixture, shared with the send step's other store tests

CLOSING = SendClosing(seq=10, payload_fingerprint="pf")


def closing_for(a: ActionRequest) -> Closing:
    def close(status: str, reason_code: str | None) -> StepRecord | None:
        return closing_step(a.ref, CLOSING, status=status, reason_code=reason_code,
                            policy_version=a.policy_version)
    return close


async def transitions(pool: asyncpg.Pool, a: ActionRequest) -> list[tuple[int, str, str]]:
    return [(r["seq"], r["from_state"], r["to_state"]) for r in await pool.fetch(
        "SELECT seq, from_state, to_state FROM state_transitions WHERE workflow_id = $1"
        " ORDER BY seq", a.ref.workflow_id)]


async def test_a_winning_settle_records_the_end_in_its_own_commit(pool: asyncpg.Pool) -> None:
    a, receipts = action(), ReceiptStore(pool)
    assert await open_and_record(pool, a, "fp", mode="assisted", step=executing(a)) is not None
    sent = await attempt_write(receipts, Target(), a, from_pending=True, fence=OPENING_FENCE,
                               closing=closing_for(a))
    assert sent.closed and sent.receipt.status == "SUCCEEDED"
    assert sent.receipt.external_id == "msg-1" and sent.receipt.updated_at is not None
    assert await transitions(pool, a) == [(9, "APPROVED", "EXECUTING"),
                                          (10, "EXECUTING", "SUCCEEDED")]
    # The settle's audit entry and the end's share one transaction: one commit, not two.
    commits = [r["xid"] for r in await pool.fetch(
        "SELECT xmin::text AS xid FROM audit_chain WHERE workflow_id = $1"
        " AND ((source = 'receipts' AND op = 'UPDATE') OR (source = 'state_transitions'"
        " AND row_key = '10'))", a.ref.workflow_id)]
    assert len(commits) == 2 and len(set(commits)) == 1


async def test_a_settle_that_lost_its_fence_records_no_end(pool: asyncpg.Pool) -> None:
    a, receipts = action(), ReceiptStore(pool)
    assert await open_and_record(pool, a, "fp", mode="assisted", step=executing(a)) is not None
    # A retried attempt took the next fence and settled; the opener's late settle loses.
    await attempt_write(receipts, Target(), a, from_pending=True)
    step = closing_for(a)("succeeded", None)
    assert step is not None
    late, closed = await receipts.settle_closing(
        a.action_key, ReceiptStatus.SUCCEEDED, fence=OPENING_FENCE, external_id="late",
        step=step)
    assert not closed and late.external_id == "msg-1"
    assert await transitions(pool, a) == [(9, "APPROVED", "EXECUTING")]


class Unknown(Target):
    async def execute(self, request: ActionRequest) -> TargetWrite:
        raise UnknownWrite("timeout_after_write", "the request may have landed")


async def test_an_unknown_write_records_no_end(pool: asyncpg.Pool) -> None:
    a, receipts = action(), ReceiptStore(pool)
    assert await open_and_record(pool, a, "fp", mode="assisted", step=executing(a)) is not None
    unknown = await attempt_write(receipts, Unknown(), a, from_pending=True,
                                  fence=OPENING_FENCE, closing=closing_for(a))
    assert (unknown.status, unknown.closed) == ("unknown", False)
    assert await transitions(pool, a) == [(9, "APPROVED", "EXECUTING")]


@pytest.mark.parametrize(("status", "ends"), [
    ("succeeded", EventState.SUCCEEDED), ("rejected", EventState.REJECTED),
    ("unknown", None), ("held", None)])
def test_only_an_outcome_that_ends_the_event_closes_it(status: str,
                                                       ends: EventState | None) -> None:
    a = action()
    receipt = Receipt(action_key=a.action_key, tenant_id=a.ref.tenant_id,
                      event_id=a.ref.event_id, adapter=a.adapter, action=a.action,
                      request_fingerprint="fp", status=ReceiptStatus.SUCCEEDED)
    step = closing_for(a)(status, "why")
    if ends is None:
        assert step is None
        return
    assert step is not None and step.outcome is not None
    (t,) = step.transitions
    assert (t.seq, t.from_state, t.to_state, t.actor, t.reason) == (
        10, EventState.EXECUTING, ends, "workflow", "why")
    assert (step.outcome.state, step.outcome.receipt, step.outcome.payload_fingerprint) == (
        ends, None, "pf")
    given = closing_step(a.ref, CLOSING, status=status, reason_code="why", policy_version="v",
                         receipt=receipt)
    assert given is not None and given.outcome is not None and given.outcome.receipt == receipt
