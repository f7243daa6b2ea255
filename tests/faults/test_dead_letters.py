"""Dead-letter replay through `tollgate ops`, against a deduping and a non-deduping target:
approved first, at most once per approval, never a blind resend to a target that does not
dedupe, and a lookup before anything is sent. At most one message at the target."""

from __future__ import annotations

from datetime import timedelta

import asyncpg
import pytest

from adapters.http.messaging import MessagingHttpAdapter
from adapters.postgres.ops import OpsStore
from adapters.postgres.receipts import ReceiptStore
from contracts import ActionRequest, EventRef, ReceiptStatus, ReconcileRequest, ReconcileResult
from policies.keys import action_key
from tests.cli.helpers import run_ops
from tests.conftest import fresh_key
from tests.faults.conftest import Rig


async def seed_unreconciled(
    rig: Rig, pool: asyncpg.Pool, *, stored_at_target: bool = False
) -> tuple[int, str]:
    """A write that ended unknown and was dead-lettered, as the reconciler leaves it."""
    event_id = fresh_key("evt")
    ref = EventRef(workflow_id=f"event/acme/{event_id}", tenant_id="acme", event_id=event_id,
                   event_type="CARE_DUE", entity_id=rig.customer(), correlation_id="corr-dlq",
                   schema_version=3)
    key = action_key("acme", event_id, "messaging", "send_message")
    action = ActionRequest(ref=ref, adapter="messaging", action="send_message", action_key=key,
                           channel="sms", body="Reminder: Miu's check-up is due.",
                           policy_version="2026-11-30.1", approved_by="an.tran")
    if stored_at_target:  # the 504-after-write case: the target took it, nobody heard back
        target = MessagingHttpAdapter(rig.standins.messaging_url)
        try:
            await target.execute(action)
        finally:
            await target.aclose()
    receipts = ReceiptStore(pool)
    await receipts.open_receipt(action, "fp")
    fence = await receipts.begin_attempt(key)
    await receipts.settle(key, ReceiptStatus.UNKNOWN, fence=fence, error_class="unknown_write",
                          error_code="target_504")
    request = ReconcileRequest(ref=ref, action=action, lookup_window=timedelta(seconds=1))
    await OpsStore(pool).dead_letter(
        workflow_id=ref.workflow_id, error_class="unknown_write", error_code="unreconciled_write",
        state="STOPPED", owner="messaging-oncall", replay_plan="check by hand", tenant_id="acme",
        redacted_payload=None, event_id=event_id, correlation_id="corr-dlq", action_key=key,
        replay_input=request.model_dump(mode="json"))
    dl_id = await pool.fetchval("SELECT id FROM dead_letters WHERE action_key = $1", key)
    return int(dl_id), key


async def ops(rig: Rig, *argv: str, role: str = "change_owner") -> int:
    """``tollgate ops ARGV`` as op.kim, holding a token of ``role`` for acme."""
    return await run_ops(list(argv), rig.settings, role=role)


@pytest.fixture
async def pool(rig: Rig) -> asyncpg.Pool:
    p = await asyncpg.create_pool(rig.database_url, min_size=1, max_size=2)
    yield p
    await p.close()


async def test_replay_needs_approval_and_runs_at_most_once_per_approval(
    rig: Rig, pool: asyncpg.Pool, capsys: pytest.CaptureFixture[str]
) -> None:
    """Fault: an unreconciled write (receipt UNKNOWN, nothing at the target) is dead-lettered;
    the first approved replay does not succeed (deduping target: 429 on all ten tries of the
    resend; non-deduping target: the resend is refused as unsafe).
    Evidence: the replay's resend consumed the ten 429s (ten POSTs) or sent nothing; the replay
    says "stopped"; a second replay is refused until a second approval.
    Invariant: one replay per approval; a deduping target ends with one message, a
    non-deduping one is never sent to blind (no POST at all)."""
    dl_id, key = await seed_unreconciled(rig, pool)
    dedupes = rig.mode == "dedupe"
    # No approval yet: refused (exit 1).
    assert await ops(rig, "dlq", "replay", str(dl_id)) == 1
    assert await ops(rig, "dlq", "approve", str(dl_id),
                     "--reason", "customer confirmed nothing arrived") == 0
    if dedupes:
        rig.standins.messaging.inject("rate_limit", key=key, times=10, retry_after=1)
    capsys.readouterr()
    assert await ops(rig, "dlq", "replay", str(dl_id)) == 1
    assert f"replay 1 of dead letter {dl_id}: stopped" in capsys.readouterr().out
    assert rig.faults_left() == []
    assert (rig.posts(key), rig.messages(key)) == ((10, 0) if dedupes else (0, 0))

    # The approval is used up by the failed replay: a second one waits for a second approval.
    # Refused until approved again.
    assert await ops(rig, "dlq", "replay", str(dl_id)) == 1
    assert rig.posts(key) == (10 if dedupes else 0)
    assert await ops(rig, "dlq", "approve", str(dl_id),
                     "--reason", "target fixed") == 0
    assert await ops(rig, "dlq", "replay", str(dl_id)) == (
        0 if dedupes else 1)
    receipt = await ReceiptStore(pool).get(key)
    assert receipt is not None
    if dedupes:
        assert receipt.status == ReceiptStatus.SUCCEEDED
        assert (rig.posts(key), rig.messages(key)) == (11, 1)
        # Once the receipt says it happened, a replay sends nothing and closes the letter.
        assert await ops(rig, "dlq", "replay", str(dl_id)) == 0
        assert await ops(rig, "dlq", "approve", str(dl_id),
                         "--reason", "again") == 1  # refused: closed: the action already happened
    else:
        assert receipt.status == ReceiptStatus.UNKNOWN
        assert (rig.posts(key), rig.messages(key)) == (0, 0)
    assert rig.posts(key) == (11 if dedupes else 0)
    row = await pool.fetchrow("SELECT status, replays FROM dead_letters WHERE id = $1", dl_id)
    assert (row["status"], row["replays"]) == (("CLOSED", 2) if dedupes else ("REPLAYED", 2))


async def test_replay_of_a_write_the_target_already_holds_finds_it_and_sends_nothing(
    rig: Rig, pool: asyncpg.Pool
) -> None:
    """Fault: the target stored the message but the receipt stayed UNKNOWN and was
    dead-lettered (a 504 after the write that the reconciler never saw settle).
    Evidence: the replay's lookup settled the receipt with the stored message's id; the replay
    ended found_at_target.
    Invariant: the replay sends nothing (the one POST is the original), one message."""
    dl_id, key = await seed_unreconciled(rig, pool, stored_at_target=True)
    assert (rig.posts(key), rig.messages(key)) == (1, 1)
    assert await ops(rig, "dlq", "approve", str(dl_id),
                     "--reason", "retry") == 0
    assert await ops(rig, "dlq", "replay", str(dl_id)) == 0
    replay = rig.client.get_workflow_handle(f"reconcile/{key}/replay-1",
                                            result_type=ReconcileResult)
    result = await replay.result()
    assert (result.status, result.reason_code) == ("succeeded", "found_at_target")
    receipt = await ReceiptStore(pool).get(key)
    stored = rig.standins.messaging.get_by_key(key)
    assert receipt is not None and stored is not None
    assert (receipt.status, receipt.external_id) == (ReceiptStatus.SUCCEEDED, stored["id"])
    assert (rig.posts(key), rig.messages(key)) == (1, 1)
