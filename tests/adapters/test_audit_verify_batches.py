"""`ops audit --verify` over a chain larger than one batch (``VERIFY_BATCH``): every chain is
checked once, a problem in any batch is found and named, and the answer is what one batch would
give. A whole chain read in one statement held about 1 kB per entry in memory (176 MB at 160,000
entries), so a large deployment's check grew without bound."""

from __future__ import annotations

from typing import Any

import asyncpg
import pytest

from adapters.postgres import audit
from adapters.postgres.audit import AuditStore

TENANT = "t-batches"
#: 11 events of 3 transitions, chained by the trigger as the steps write them.
FILL = f"""
INSERT INTO state_transitions (workflow_id, seq, from_state, to_state, actor, reason)
SELECT 'event/{TENANT}/evt-' || lpad(g::text, 2, '0'), s, CASE WHEN s > 1 THEN 'S' || (s - 1)
       END, 'S' || s, 'system', 'ok'
  FROM generate_series(1, 11) g, generate_series(1, 3) s ORDER BY g, s"""


async def tamper(pool: asyncpg.Pool, workflow_id: str, seq: int) -> None:
    """What someone with the superuser could do: edit a row with the triggers off."""
    async with pool.acquire() as conn:
        await conn.execute("SET session_replication_role = replica")
        await conn.execute("UPDATE state_transitions SET reason = 'rewritten'"
                           " WHERE workflow_id = $1 AND seq = $2", workflow_id, seq)
        await conn.execute("SET session_replication_role = origin")


async def test_a_check_in_batches_finds_what_one_batch_finds(
        pool: asyncpg.Pool, monkeypatch: pytest.MonkeyPatch) -> None:
    await pool.execute(FILL)
    first, last = f"event/{TENANT}/evt-01", f"event/{TENANT}/evt-11"
    await tamper(pool, first, 2)
    await tamper(pool, last, 3)
    whole = await AuditStore(pool).verify_all(TENANT)

    monkeypatch.setattr(audit, "VERIFY_BATCH", 4)  # three batches: 4, 4 and 3 chains
    read: list[int] = []
    recompute = audit._verify

    async def counted(conn: Any, workflows: list[str]) -> list[audit.AuditProblem]:
        read.append(len(workflows))
        return await recompute(conn, workflows)

    monkeypatch.setattr(audit, "_verify", counted)
    batched = await AuditStore(pool).verify_all(TENANT)

    assert read == [4, 4, 3]  # no read holds more than a batch of chains
    assert batched == whole
    checked, problems = batched
    assert checked == 11
    assert [(p.workflow_id, p.row_key, p.problem) for p in problems] == [
        (first, "2", "row was edited after it was chained"),
        (last, "3", "row was edited after it was chained")]
