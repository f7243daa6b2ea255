"""The dashboard's "Unknown writes open" read ``tollgate_receipts{status="UNKNOWN"}``: receipts by
status. But a write moved aside to a dead letter (ADR 0059) or closed by hand (ADR 0060) keeps
its receipt UNKNOWN for good, so after operators had taken every unknown write in hand the panel
still said N open while ``ops status`` said 0. ``/metrics`` now serves what ``ops status`` counts,
by the same SQL: open, moved aside, closed by hand. Read back as the exporter renders the page,
from a module database of its own, so the figures are exact."""

from __future__ import annotations

from datetime import UTC, datetime

import asyncpg
from temporalio.client import Client

from adapters.postgres.ops import OpsStore
from adapters.postgres.receipts import ReceiptStore
from adapters.postgres.status import StatusStore
from tests.cli.unknown_write_support import letter, open_write
from tests.observability.scrape_support import scrape
from tollgate.ops.dead_letter_close import close_dead_letter
from tollgate.runtime.exits import Exit


async def no_temporal() -> Client:
    raise AssertionError("a dead letter never replayed closes with PostgreSQL alone")


async def test_metrics_count_open_unknown_writes_as_ops_status_does(pool: asyncpg.Pool) -> None:
    receipts, ops = ReceiptStore(pool), OpsStore(pool)
    await open_write(receipts)  # live: the reconciler's
    aside_wid, aside = await open_write(receipts)
    await letter(ops, aside_wid, aside)  # moved aside: its dead letter is OPEN
    closed_wid, closed = await open_write(receipts)
    closed_id = await letter(ops, closed_wid, closed)
    row = await ops.dead_letter_row(closed_id)
    assert row is not None
    done, _ = await close_dead_letter(pool, dict(row), "op.kim",
                                      "customer called by phone instead", no_temporal)
    assert done == Exit.OK

    page = await scrape(pool)
    snap = await StatusStore(pool).snapshot(datetime.now(UTC))
    where = frozenset({"tenant_id": "acme", "adapter": "messaging"}.items())
    served = tuple(page.get((name, where)) for name in (
        "tollgate_open_unknown_writes", "tollgate_unknown_writes_moved_aside",
        "tollgate_unknown_writes_closed_by_hand"))
    assert served == (snap["open_unknown_writes"], snap["unknown_writes_moved_aside"],
                      snap["unknown_writes_closed_by_hand"]) == (1, 1, 1)
    # Receipts by status still say three UNKNOWN: that figure is not what is open.
    assert page[("tollgate_receipts", where | {("status", "UNKNOWN")})] == 3
