"""The restore drill: state and receipts come back together, and nothing is sent twice."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

from adapters.http.messaging import MessagingHttpAdapter
from adapters.postgres.pool import create_pool
from adapters.postgres.receipts import ReceiptStore
from contracts import EventState, ReceiptStatus
from tests.conftest import signed_event
from tests.faults.conftest import Rig, send_key
from tollgate.ops.backup import backup, restore


def key(name: str) -> str:
    return f"{name}-{datetime.now(UTC):%H%M%S%f}"


async def test_a_restore_mid_run_sends_nothing_twice_and_keeps_receipts_answerable(
    rig: Rig, tmp_path: Path
) -> None:
    """Fault: the database is lost mid-run and restored from a backup taken while one event was
    sent (A), one waited for review (C), and before another was sent (B).
    Evidence: after the restore B's rows are gone from PostgreSQL (the backup predates them)
    while A's receipt is back; C is approved after the restore.
    Invariant: A and B keep one POST each (B redelivered is a duplicate Temporal answers), C
    sends once, A's receipt answers with the target's id, and B's write is still found at the
    target by its key (what the reconciler and the sweep rely on)."""
    a, b, c = key("a"), key("b"), key("c")
    sent_a = await rig.submit(signed_event(rig.customer(), key=a))
    await rig.approve(sent_a.workflow_id)
    assert (await rig.outcome(sent_a.workflow_id)).state == EventState.SUCCEEDED
    waiting = await rig.submit(signed_event(rig.customer(), key=c))
    await rig.wait_review(waiting.workflow_id)

    dump = tmp_path / "tollgate.dump"
    await asyncio.to_thread(backup, rig.database_url, dump)

    raw_b = signed_event(rig.customer(), key=b)
    sent_b = await rig.submit(raw_b)
    await rig.approve(sent_b.workflow_id)
    assert (await rig.outcome(sent_b.workflow_id)).state == EventState.SUCCEEDED

    await asyncio.to_thread(restore, rig.database_url, dump)  # the database as at the backup
    assert await rig.sql("SELECT 1 FROM receipts WHERE action_key = $1", send_key(b)) == []

    await rig.approve(waiting.workflow_id)
    assert (await rig.outcome(waiting.workflow_id)).state == EventState.SUCCEEDED
    again = await rig.submit(raw_b)
    assert again.status == "duplicate"

    assert [rig.posts(send_key(k)) for k in (a, b, c)] == [1, 1, 1]
    assert [rig.messages(send_key(k)) for k in (a, b, c)] == [1, 1, 1]
    pool = await create_pool(rig.database_url, max_size=2)
    try:
        receipt = await ReceiptStore(pool).get(send_key(a))
    finally:
        await pool.close()
    held = rig.standins.messaging.get_by_key(send_key(a))
    assert receipt is not None and held is not None
    assert (receipt.status, receipt.external_id) == (ReceiptStatus.SUCCEEDED, held["id"])
    target = MessagingHttpAdapter(rig.standins.messaging_url)
    try:
        assert await target.lookup(send_key(b)) is not None
    finally:
        await target.aclose()
