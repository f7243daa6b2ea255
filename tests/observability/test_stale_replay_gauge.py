"""``ops status`` named replayed dead letters in no queue (ADRs 0066, 0069), but ``/metrics`` had
no figure for them, so no alert could page anyone about a write left open with nobody on it.
``tollgate_stale_replays`` counts them by tenant and adapter, by the SQL ``ops status`` uses:
read back as the exporter renders the page, from a module database of its own."""

from __future__ import annotations

from datetime import UTC, datetime

import asyncpg

from adapters.postgres.ops import OpsStore
from adapters.postgres.receipts import ReceiptStore
from adapters.postgres.status import StatusStore
from tests.cli.dlq_support import replayable
from tests.observability.scrape_support import scrape


async def replayed(ops: OpsStore, receipts: ReceiptStore) -> tuple[int, str]:
    """A dead letter approved and replayed once (claimed now), its write still open."""
    dl_id, key = await replayable(receipts, ops)
    assert await ops.approve_dead_letter(dl_id, actor="mai", reason="r")
    assert await ops.claim_replay(dl_id, actor="mai") == 1
    return dl_id, key


async def test_metrics_count_replays_in_no_queue_as_ops_status_does(pool: asyncpg.Pool) -> None:
    receipts, ops = ReceiptStore(pool), OpsStore(pool)
    await replayed(ops, receipts)  # claimed just now, no end: it may well run, not counted
    lost, _ = await replayed(ops, receipts)
    await pool.execute("UPDATE dead_letters SET updated_at = now() - interval '2 hours'"
                       " WHERE id = $1", lost)  # far past its 10-minute window plus an hour
    cancelled, key = await replayed(ops, receipts)
    assert await ops.record_replay_result(cancelled, actor=None, replay=1, result="cancelled")
    # The adapter label is the open receipt's.
    await pool.execute("UPDATE receipts SET adapter = 'helpdesk' WHERE action_key = $1", key)

    page = await scrape(pool)
    snap = await StatusStore(pool).snapshot(datetime.now(UTC))
    assert [r["dead_letter"] for r in snap["stale_replays"]] == [lost, cancelled]
    served = {dict(labels)["adapter"]: value for (name, labels), value in page.items()
              if name == "tollgate_stale_replays" and dict(labels)["tenant_id"] == "acme"}
    assert served == {"messaging": 1, "helpdesk": 1}
    assert sum(served.values()) == len(snap["stale_replays"])
