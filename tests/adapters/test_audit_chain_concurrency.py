"""The audit chain under concurrent writers of one tenant (issue 33, migration 0131): a
transaction that must wait for the tenant's head row appends after everything the holder
committed, so the chains and the head are the ones the same writes made one after another would
give, and `tollgate ops audit --verify` passes after a burst."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import asyncpg
import pytest

from adapters.postgres.audit import link, row_digest
from tests.adapters.audit_chain_support import event_ids_in_shards
from tests.cli.helpers import run_ops
from tests.conftest import TEST_KEYS_FILE
from tests.eventually import eventually
from tollgate.config.settings import Settings

INSERT = ("INSERT INTO state_transitions (workflow_id, seq, from_state, to_state, actor, reason)"
          " VALUES ($1, $2, 'RECEIVED', 'VALIDATED', 'system', 'ok')")


def chain_ids_in_shards(tenant: str, shards: list[int]) -> list[str]:
    """Distinct chain ids ``event/TENANT/eN`` falling in the given head shards, in order."""
    return [f"event/{tenant}/{e}" for e in event_ids_in_shards(tenant, shards, stem="e")]


async def expected_chain(conn: asyncpg.Connection, writes: list[tuple[str, int]]) -> dict[
        str, list[tuple[int, str, bytes]]]:
    """Each event's chain as the rows, appended one by one in ``writes`` order, would make it."""
    chains: dict[str, list[tuple[int, str, bytes]]] = {}
    for wf, seq in writes:
        js = await conn.fetchval("SELECT audit_row_json(t) FROM state_transitions t"
                                 " WHERE workflow_id = $1 AND seq = $2", wf, seq)
        chain = chains.setdefault(wf, [])
        prev = chain[-1][2] if chain else None
        chain.append((len(chain) + 1, str(seq), link(prev, row_digest("state_transitions", js))))
    return chains


async def stored_chain(conn: asyncpg.Connection, wf: str) -> list[tuple[int, str, bytes]]:
    rows = await conn.fetch("SELECT n, row_key, hash FROM audit_chain WHERE workflow_id = $1"
                            " ORDER BY n", wf)
    return [(r["n"], r["row_key"], bytes(r["hash"])) for r in rows]


async def waiting_on_a_lock(conn: asyncpg.Connection, pid: int) -> bool:
    return bool(await conn.fetchval("SELECT wait_event_type = 'Lock' FROM pg_stat_activity"
                                    " WHERE pid = $1", pid))


@pytest.mark.parametrize("head", ["new", "existing"])
@pytest.mark.parametrize("second_first_writes", ["another event", "the same event"])
async def test_a_writer_that_waits_appends_after_the_holder_as_if_sequential(
    database_url: str, pool: asyncpg.Pool, second_first_writes: str, head: str,
) -> None:
    # A new head: the first writer also creates the head row the second must wait for.
    tenant = f"c{uuid.uuid4().hex[:8]}"
    # Every event here under one head shard (migration 0132), so the writers share one lock.
    x, y, earlier = chain_ids_in_shards(tenant, [4, 4, 4])
    if head == "existing":
        await pool.execute(INSERT, earlier, 1)
    a, b, watch = [await asyncpg.connect(database_url) for _ in range(3)]
    try:
        ta, tb = a.transaction(), b.transaction()
        await ta.start()
        await tb.start()
        await a.execute(INSERT, x, 1)
        b_first = (y, 1) if second_first_writes == "another event" else (x, 3)
        blocked = asyncio.create_task(b.execute(INSERT, *b_first))
        await eventually(lambda: waiting_on_a_lock(watch, b.get_server_pid()),
                         "the second writer waiting for the tenant's head row")
        await a.execute(INSERT, x, 2)
        await ta.commit()
        await blocked
        b_rest = [(x, 3)] if b_first == (y, 1) else [(y, 1)]
        for wf, seq in b_rest:
            await b.execute(INSERT, wf, seq)
        await b.execute(INSERT, y, 2)
        await tb.commit()

        # Sequentially: A's three rows in A's order, then B's in B's order.
        b_writes = [b_first, *b_rest, (y, 2)]
        expected = await expected_chain(watch, [(x, 1), (x, 2), *b_writes])
        assert await stored_chain(watch, x) == expected[x]
        assert await stored_chain(watch, y) == expected[y]
        row = await watch.fetchrow("SELECT entries, head_hash FROM audit_chain_heads"
                                   " WHERE tenant_id = $1 AND shard = 4", tenant)
        assert row["entries"] == 5 + (head == "existing")
        assert bytes(row["head_hash"]) == expected[y][-1][2]  # B's last row, committed last
    finally:
        for conn in (a, b, watch):
            await conn.close()


async def test_ops_audit_verify_passes_after_a_burst_of_concurrent_writers(
    database_url: str, pool: asyncpg.Pool, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    tenant = f"b{uuid.uuid4().hex[:8]}"

    async def writer(w: int) -> None:
        # Events shared by two writers each, some rows alone and some three to a transaction.
        async with pool.acquire() as conn:
            for i in range(6):
                wf = f"event/{tenant}/e{(w // 2) * 10 + i}"
                async with conn.transaction():
                    for step in range(3 if i % 2 else 1):
                        await conn.execute(INSERT, wf, w * 100 + i * 10 + step)

    await asyncio.gather(*(writer(w) for w in range(8)))

    entries = await pool.fetchval("SELECT sum(entries) FROM audit_chain_heads"
                                  " WHERE tenant_id = $1", tenant)
    assert entries == 8 * (3 * 1 + 3 * 3)
    s = Settings.from_env({"DATABASE_URL": database_url, "TOLLGATE_STATE_DIR": str(tmp_path),
                           "TOLLGATE_KEYS_FILE": str(TEST_KEYS_FILE)})
    capsys.readouterr()
    assert await run_ops(["audit", "--verify", "--tenant", tenant], s) == 0
    out = capsys.readouterr().out
    assert "!" not in out


@pytest.mark.parametrize("shards", ["different shards", "the same shard"])
async def test_events_of_one_tenant_wait_for_each_other_only_within_a_head_shard(
    database_url: str, shards: str,
) -> None:
    tenant = f"s{uuid.uuid4().hex[:8]}"
    x, y = chain_ids_in_shards(tenant, [1, 6 if shards == "different shards" else 1])
    a, b, watch = [await asyncpg.connect(database_url) for _ in range(3)]
    try:
        ta = a.transaction()
        await ta.start()
        await a.execute(INSERT, x, 1)  # A holds x's shard head until it commits
        second = asyncio.create_task(b.execute(INSERT, y, 1))  # B: autocommit
        if shards == "different shards":
            # B commits while A still holds its lock (were B waiting, this would fail).
            await eventually(second.done, "the other shard's writer committing")
            await second
            assert await stored_chain(watch, y) != [] and await stored_chain(watch, x) == []
            await ta.commit()
        else:
            await eventually(lambda: waiting_on_a_lock(watch, b.get_server_pid()),
                             "the second writer waiting for the shard's head row")
            assert not second.done()
            await ta.commit()
            await second
        heads = await watch.fetch("SELECT shard, entries FROM audit_chain_heads"
                                  " WHERE tenant_id = $1 ORDER BY shard", tenant)
        expected = {1: 1, 6: 1} if shards == "different shards" else {1: 2}
        assert {r["shard"]: r["entries"] for r in heads} == expected
    finally:
        for conn in (a, b, watch):
            await conn.close()
