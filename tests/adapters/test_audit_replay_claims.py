"""Who claimed a dead letter's replay is read from its ``dlq_replay`` audit row, by target and
replay number, every time a replay's end is recorded (ADR 0069) and when a replay settles the
write. ``audit`` had no index on ``target``, so each read scanned the whole table, which only
grows (6,000 rows: 80 pages read, 5,999 rows thrown away). Migration 0137 indexes the claims
alone; the planner now reads three pages."""

from __future__ import annotations

import asyncpg

from adapters.postgres.dead_letters import REPLAY_RESULT_SQL
from adapters.postgres.replay_settle import _REPLAYED_BY_SQL

#: A month of audit rows of other kinds (sweeps, switches, approvals, refusals), then 300
#: replay claims and their ends.
FILL = """
INSERT INTO audit (actor, action, target, detail)
SELECT 'op', (ARRAY['receipt_sweep', 'kill', 'reopen', 'dlq_approve',
                    'refused:dead_letter_replay', 'dlq_close'])[1 + g % 6],
       'dead_letter/' || (g % 2000), jsonb_build_object('n', g)
  FROM generate_series(1, 5400) g
UNION ALL
SELECT 'op', a, 'dead_letter/' || (10000 + g), jsonb_build_object('replay', 1 + g % 3)
  FROM generate_series(1, 300) g, unnest(ARRAY['dlq_replay', 'dlq_replay_result']) a"""


async def plan(conn: asyncpg.Connection, sql: str, *args: object) -> str:
    return str(await conn.fetchval("EXPLAIN (FORMAT JSON) " + sql, *args))


async def test_who_claimed_a_replay_is_found_by_the_index_not_a_scan(
        pool: asyncpg.Pool) -> None:
    async with pool.acquire() as conn:  # the module's own database: nothing to clean up
        await conn.execute(FILL)
        await conn.execute("ANALYZE audit")
        read = [await plan(conn, _REPLAYED_BY_SQL, "dead_letter/10042", "1"),
                await plan(conn, REPLAY_RESULT_SQL, "dead_letter/10042", 1, "stopped", None)]
        assert await conn.fetchval(_REPLAYED_BY_SQL, "dead_letter/10042", "1") == "op"
    for text in read:
        assert '"Index Name": "audit_replay_claims"' in text and '"Seq Scan"' not in text
