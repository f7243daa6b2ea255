"""One tenant's audit check (`tollgate ops audit --verify --tenant`) beside other tenants'
chains: the tenant's entries are found through an index, not by reading every tenant's, and
the check passes (ADR 0089). Migration 0138 dropped ``audit_chain_tenant (tenant_id, id)``;
``audit_chain_tenant_shard (tenant_id, shard, id)`` leads with the same column and serves the
tenant filter since."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from adapters.postgres.audit import CHAIN_IDS_SQL
from tests.cli.helpers import run_ops
from tests.conftest import TEST_KEYS_FILE
from tollgate.config.settings import Settings

#: 900 events of 8 transitions, their entries interleaved as concurrent tenants write them:
#: 7,200 entries, of which the small tenant's are 240 (one event in 30).
EVENTS, STEPS, SMALL, SMALL_EVENTS = 900, 8, "hooli", 30
FILL = f"""
INSERT INTO state_transitions (workflow_id, seq, from_state, to_state, actor, reason)
SELECT 'event/' || CASE WHEN g % 30 = 0 THEN '{SMALL}' WHEN g % 30 < 5 THEN 'initech'
                        WHEN g % 30 < 13 THEN 'globex' ELSE 'acme' END || '/evt-' || g,
       s, CASE WHEN s > 1 THEN 'S' || (s - 1) END, 'S' || s, 'system', 'ok'
  FROM generate_series(1, {EVENTS}) g, generate_series(1, {STEPS}) s ORDER BY s, g"""


@pytest.fixture(scope="module")
async def filled(pool: asyncpg.Pool) -> AsyncIterator[asyncpg.Pool]:
    # Through the trigger, as the steps write them: every row chains itself.
    await pool.execute(FILL)
    await pool.execute("ANALYZE audit_chain")
    yield pool


def scans_of(node: dict[str, Any], table: str) -> list[dict[str, Any]]:
    """The plan nodes that read ``table``, each with the nodes under it."""
    found = [node] if node.get("Relation Name") == table else []
    for child in node.get("Plans", []):
        found += scans_of(child, table)
    return found


async def test_one_tenants_check_finds_its_chains_through_an_index(
        filled: asyncpg.Pool) -> None:
    async with filled.acquire() as conn:
        # Planned with the tenant bound, as the command's one call on its own connection is.
        plan = json.loads(await conn.fetchval("EXPLAIN (FORMAT JSON) " + CHAIN_IDS_SQL, SMALL))
        found = await conn.fetch(CHAIN_IDS_SQL, SMALL)
    assert len(found) == SMALL_EVENTS
    reads = [json.dumps(scan) for scan in scans_of(plan[0]["Plan"], "audit_chain")]
    # An index whose condition is the tenant: not a scan of every tenant's 7,200 entries, nor
    # a walk of another index filtering them one by one.
    assert reads and all('"Seq Scan"' not in read for read in reads), reads
    assert all(f'"Index Cond": "(tenant_id = \'{SMALL}\'::text)"' in read for read in reads), reads


async def test_ops_audit_verify_of_one_tenant_passes_without_the_dropped_index(
    filled: asyncpg.Pool, database_url: str, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert await filled.fetchval("SELECT to_regclass('audit_chain_tenant')") is None
    s = Settings.from_env({"DATABASE_URL": database_url, "TOLLGATE_STATE_DIR": str(tmp_path),
                           "TOLLGATE_KEYS_FILE": str(TEST_KEYS_FILE)})
    capsys.readouterr()
    assert await run_ops(["audit", "--verify", "--tenant", SMALL], s) == 0
    assert capsys.readouterr().out.strip() == f"{SMALL_EVENTS} chain(s) checked: intact"
