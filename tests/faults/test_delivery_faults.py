"""Duplicates, conflicts and target faults, each against a deduping and a non-deduping target.

Every test names the fault, the evidence that it happened (the stand-in consumed it, POSTs per
key, the workflow history) and the invariant: at most one message per action key at the
target, and every event in exactly one terminal state.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta

from temporalio.common import WorkflowIDReusePolicy

from contracts import EventState, IntakeRequest, ReceiptStatus
from policies.signing import sign_json
from tests.conftest import TENANT_SECRETS, fresh_key, signed_event
from tests.eventually import eventually
from tests.faults.conftest import Rig, failure_message, send_key
from workflows.process_event import ProcessEventWorkflow


def new_key() -> str:
    return fresh_key("f")


async def test_fifty_concurrent_copies_make_one_workflow_and_one_message(rig: Rig) -> None:
    """Fault: the producer delivers one event 50 times at once.
    Evidence: 50 acks, exactly one "accepted", the rest "duplicate" of the same workflow.
    Invariant: one workflow, one POST, one message, one SUCCEEDED row."""
    key = new_key()
    raw = signed_event(rig.customer(), key=key)
    acks = await asyncio.gather(*(rig.submit(raw) for _ in range(50)))
    assert len({a.workflow_id for a in acks}) == 1
    assert sorted(a.status for a in acks).count("accepted") == 1
    assert all(a.status in ("accepted", "duplicate") for a in acks)
    await rig.approve(acks[0].workflow_id)
    outcome = await rig.outcome(acks[0].workflow_id)
    assert outcome.state == EventState.SUCCEEDED
    assert outcome.receipt is not None and outcome.receipt.action_key == send_key(key)
    assert (rig.posts(send_key(key)), rig.messages(send_key(key))) == (1, 1)
    rows = await rig.sql("SELECT state FROM events WHERE workflow_id = $1", acks[0].workflow_id)
    assert [r["state"] for r in rows] == ["SUCCEEDED"]


async def test_duplicate_after_the_workflow_closed_returns_the_old_outcome(rig: Rig) -> None:
    """Fault: the same event is delivered again after its workflow closed.
    Evidence: the second ack is "duplicate" and carries the first outcome's receipt.
    Invariant: no second POST; one message."""
    key = new_key()
    raw = signed_event(rig.customer(), key=key)
    first = await rig.submit(raw)
    await rig.approve(first.workflow_id)
    done = await rig.outcome(first.workflow_id)
    again = await rig.submit(raw)
    assert again.status == "duplicate"
    assert again.previous is not None and again.previous.state == EventState.SUCCEEDED
    assert again.previous.receipt == done.receipt
    assert (rig.posts(send_key(key)), rig.messages(send_key(key))) == (1, 1)


async def test_same_key_with_another_payload_is_quarantined_and_sends_nothing(rig: Rig) -> None:
    """Fault: a validly signed event reuses a key with another payload, while the first runs
    and after it closed.
    Evidence: both are refused "idempotency_conflict" and a quarantine row says so.
    Invariant: only the first event's message is sent, once."""
    key, customer = new_key(), rig.customer()
    first = await rig.submit(signed_event(customer, key=key))
    other = json.loads(signed_event(customer, key=key))
    other["payload"]["reminder_kind"] = "checkup"
    other_raw = sign_json(json.dumps(other), TENANT_SECRETS)  # validly signed, other payload
    while_running = await rig.submit(other_raw)
    assert while_running.status == "invalid"
    assert while_running.reason_code == "idempotency_conflict"
    quarantined = await rig.sql("SELECT reason_code FROM quarantine WHERE workflow_id = $1",
                                while_running.workflow_id)
    assert [r["reason_code"] for r in quarantined] == ["idempotency_conflict"]
    await rig.approve(first.workflow_id)
    await rig.outcome(first.workflow_id)
    after_close = await rig.submit(other_raw)
    assert after_close.status == "invalid"
    assert after_close.reason_code == "idempotency_conflict"
    assert (rig.posts(send_key(key)), rig.messages(send_key(key))) == (1, 1)


async def test_504_after_write_with_a_late_receipt_is_reconciled_to_one_message(rig: Rig) -> None:
    """Fault: the target stores the message, answers 504, and its lookup shows the message only
    2.5 s later (the reconciler looks at once, then 1 s and 3 s on: the last finds it).
    Evidence: the fault was consumed; the execute step ended "unknown"; the reconciler's first
    lookup found nothing and a later one found the message.
    Invariant: no resend (one POST), one message, SUCCEEDED found_at_target."""
    key = new_key()
    rig.standins.messaging.inject("fail_after_write", key=send_key(key), lookup_delay_ms=2500)
    ack = await rig.submit(signed_event(rig.customer(), key=key))
    await rig.approve(ack.workflow_id)
    outcome = await rig.outcome(ack.workflow_id)
    assert rig.faults_left() == []
    [execute] = await rig.attempts(ack.workflow_id, "execute_action")
    assert execute.result["status"] == "unknown"
    lookups = await rig.attempts(f"reconcile/{send_key(key)}", "lookup_write")
    assert lookups[0].result is None and lookups[-1].result["reason_code"] == "found_at_target"
    assert outcome.state == EventState.SUCCEEDED
    assert outcome.reason_code == "found_at_target"
    assert outcome.receipt is not None
    assert outcome.receipt.external_id == rig.standins.messaging.get_by_key(send_key(key))["id"]
    assert (rig.posts(send_key(key)), rig.messages(send_key(key))) == (1, 1)


async def test_429_waits_the_stated_delay_then_sends_once(rig: Rig) -> None:
    """Fault: the target answers 429 with Retry-After: 3 to the first send.
    Evidence: the fault was consumed; the execute step's second attempt carries the rate-limit
    failure and started at least 3 s after the step was scheduled (the policy's own first
    backoff is 1 s, so only Retry-After explains the wait).
    Invariant: two POSTs, one message, SUCCEEDED; a 429 proves nothing was written, so even a
    target that does not dedupe gets the resend."""
    key = new_key()
    rig.standins.messaging.inject("rate_limit", key=send_key(key), retry_after=3)
    ack = await rig.submit(signed_event(rig.customer(), key=key))
    await rig.approve(ack.workflow_id)
    outcome = await rig.outcome(ack.workflow_id)
    assert rig.faults_left() == []
    [execute] = await rig.attempts(ack.workflow_id, "execute_action")
    assert execute.attempt == 2 and "messaging_rate_limited" in execute.last_failure
    assert execute.started_at - execute.scheduled_at >= timedelta(seconds=3)
    assert outcome.state == EventState.SUCCEEDED
    assert outcome.receipt is not None and outcome.receipt.attempts == 2
    assert (rig.posts(send_key(key)), rig.messages(send_key(key))) == (2, 1)


async def test_target_down_then_back_sends_once_with_the_same_key(rig: Rig) -> None:
    """Fault: the target refuses connections when the send starts.
    Evidence: the execute step is seen retrying with the connection failure (attempt 2 or
    later pending) while the target is down; the history keeps that failure.
    Invariant: nothing reached the target while down; once up, one POST and one message."""
    key = new_key()
    ack = await rig.submit(signed_event(rig.customer(), key=key))
    handle = rig.client.get_workflow_handle(ack.workflow_id)

    async def retrying_against_the_downed_target() -> bool:
        pending = (await handle.describe()).raw_description.pending_activities
        for p in pending:
            if p.activity_type.name == "execute_action" and p.attempt >= 2 and (
                    "messaging_unreachable" in await failure_message(rig.client, p.last_failure)):
                return True
        return False

    rig.standins.messaging.down()
    try:
        await rig.approve(ack.workflow_id)
        await eventually(retrying_against_the_downed_target, "a send refused by the target")
        assert rig.posts(send_key(key)) == 0
    finally:
        rig.standins.messaging.up()
    outcome = await rig.outcome(ack.workflow_id)
    [execute] = await rig.attempts(ack.workflow_id, "execute_action")
    assert execute.attempt >= 2 and "messaging_unreachable" in execute.last_failure
    assert outcome.state == EventState.SUCCEEDED
    assert (rig.posts(send_key(key)), rig.messages(send_key(key))) == (1, 1)


async def test_business_rejection_by_the_target_is_final(rig: Rig) -> None:
    """Fault: the target refuses the send on a business rule (422).
    Evidence: the fault was consumed; the receipt records the rejection after one attempt.
    Invariant: REJECTED, one POST, no retry, no message."""
    key = new_key()
    rig.standins.messaging.inject("reject", key=send_key(key))
    ack = await rig.submit(signed_event(rig.customer(), key=key))
    await rig.approve(ack.workflow_id)
    outcome = await rig.outcome(ack.workflow_id)
    assert rig.faults_left() == []
    assert outcome.state == EventState.REJECTED
    assert outcome.receipt is not None and outcome.receipt.status == ReceiptStatus.REJECTED
    assert outcome.receipt.attempts == 1
    assert (rig.posts(send_key(key)), rig.messages(send_key(key))) == (1, 0)


async def test_gate_answers_from_postgres_once_temporal_has_forgotten_the_run(rig: Rig) -> None:
    """Fault: a new run under the same workflow id, which is what a delivery looks like after
    Temporal's retention dropped the first one.
    Evidence: the new run ends DUPLICATE with the first run's receipt, read from PostgreSQL.
    Invariant: no second POST; the first outcome's row is untouched."""
    key = new_key()
    raw = signed_event(rig.customer(), key=key)
    first = await rig.submit(raw)
    await rig.approve(first.workflow_id)
    done = await rig.outcome(first.workflow_id)
    rerun = await rig.client.start_workflow(
        ProcessEventWorkflow.run, IntakeRequest(raw=raw, received_at=datetime.now(UTC)),
        id=first.workflow_id, task_queue=rig.queue,
        id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE)
    outcome = await rerun.result()
    assert outcome.state == EventState.DUPLICATE
    assert outcome.receipt == done.receipt
    assert (rig.posts(send_key(key)), rig.messages(send_key(key))) == (1, 1)
    rows = await rig.sql("SELECT state FROM events WHERE workflow_id = $1", first.workflow_id)
    assert [r["state"] for r in rows] == ["SUCCEEDED"]  # the first outcome is untouched
