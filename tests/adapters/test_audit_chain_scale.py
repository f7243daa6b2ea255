"""The audit chain beside many waiting events (issue 33, parked events): chaining a row reads
the event's own entries through the index, however many entries other events hold, and the
chain it writes is the one the check expects (migration 0133)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import pytest

from adapters.postgres.audit import AuditStore
from adapters.postgres.pool import create_pool

#: Other events' entries already chained: 2,000 waiting events of two transitions each.
PARKED_EVENTS = 2000


@pytest.fixture(scope="module")
async def store(database_url: str) -> AsyncIterator[AuditStore]:
    pool = await create_pool(database_url, max_size=2)
    # Written through the trigger, as the steps write them: every row chains itself.
    await pool.execute(
        "INSERT INTO state_transitions (workflow_id, seq, from_state, to_state, actor, reason)"
        " SELECT 'event/globex/parked-' || e, s, CASE WHEN s = 2 THEN 'RECEIVED' END,"
        " CASE WHEN s = 1 THEN 'RECEIVED' ELSE 'AWAITING_REVIEW' END, 'system', 'ok'"
        " FROM generate_series(1, $1) e, generate_series(1, 2) s ORDER BY e, s",
        PARKED_EVENTS)
    await pool.execute("ANALYZE audit_chain")
    yield AuditStore(pool)
    await pool.close()


async def chain_rows_read(conn: asyncpg.Connection) -> int:
    """audit_chain rows this transaction read, by a scan of the table or through an index."""
    row = await conn.fetchrow(
        "SELECT seq_tup_read + coalesce(idx_tup_fetch, 0) AS n FROM pg_stat_xact_user_tables"
        " WHERE relname = 'audit_chain'")
    assert row is not None
    return int(row["n"])


async def test_chaining_a_row_reads_the_events_own_entries_not_every_events(
    store: AuditStore,
) -> None:
    wf = "event/acme/busy-1"
    async with store.pool.acquire() as conn, conn.transaction():
        before = await chain_rows_read(conn)
        for seq, (a, b) in enumerate([(None, "RECEIVED"), ("RECEIVED", "VALIDATED"),
                                      ("VALIDATED", "AWAITING_REVIEW")], start=1):
            await conn.execute(
                "INSERT INTO state_transitions (workflow_id, seq, from_state, to_state, actor,"
                " reason) VALUES ($1, $2, $3, $4, 'system', 'ok')", wf, seq, a, b)
        read = await chain_rows_read(conn) - before
    # Three entries, each after reading at most its event's newest entry (0 + 1 + 1 rows);
    # before 0133 each read every entry in the table (4,000 and more).
    assert read <= 3, f"chaining 3 rows read {read} audit_chain rows"
    assert [e["n"] for e in await store.chain(wf)] == [1, 2, 3]
    assert await store.verify_event(wf) == []


async def test_the_chains_and_heads_written_beside_them_verify(store: AuditStore) -> None:
    checked, problems = await store.verify_all("globex")
    assert checked == PARKED_EVENTS and problems == []
    assert [e["n"] for e in await store.chain("event/globex/parked-7")] == [1, 2]
