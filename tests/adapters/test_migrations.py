"""The migration runner checks what it applied (issue 24, item 5; docs/adr/0024): an applied file
edited afterwards stops the start-up naming the file and applies nothing, an untouched re-run is a
no-op, and a database migrated before the checksum column gets its checksums on its next start."""

from __future__ import annotations

import asyncio
import hashlib
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from adapters.postgres import pool as pool_module
from adapters.postgres.audit import AuditStore, chain_shard
from adapters.postgres.pool import MigrationChecksumError, migrate
from tests.eventually import eventually
from tests.pg_databases import empty_database

SHIPPED = Path(pool_module.__file__).parent / "migrations"
CHECKSUMS = "0070_migration_checksums.sql"


@pytest.fixture
async def empty_pool(pg_server: str) -> AsyncIterator[asyncpg.Pool]:
    """A pool on a database of its own with no schema at all (not even schema_migrations)."""
    made = await asyncpg.create_pool(await empty_database(pg_server, "mig"), min_size=1,
                                     max_size=2)
    yield made
    await made.close()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A copy of the shipped migrations that a test may edit."""
    copy = tmp_path / "migrations"
    shutil.copytree(SHIPPED, copy, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    return copy


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


async def recorded(pool: asyncpg.Pool) -> dict[str, str | None]:
    rows = await pool.fetch("SELECT name, checksum FROM schema_migrations")
    return {r["name"]: r["checksum"] for r in rows}


async def test_an_edited_applied_migration_fails_naming_it_and_applies_nothing(
    empty_pool: asyncpg.Pool, folder: Path
) -> None:
    await migrate(empty_pool, folder=folder)
    edited = folder / "0002_review.sql"
    edited.write_text(edited.read_text() + "\nALTER TABLE review_decisions ADD COLUMN note text;\n")
    (folder / "0999_later.sql").write_text("CREATE TABLE later_table (id int);\n")

    with pytest.raises(MigrationChecksumError) as failed:
        await migrate(empty_pool, folder=folder)

    message = str(failed.value)
    assert "0002_review.sql" in message and "\n" not in message
    # Neither the edit nor the new file ran: the start-up stopped before touching the schema.
    assert not await empty_pool.fetchval("SELECT to_regclass('later_table') IS NOT NULL")
    assert "0999_later.sql" not in await recorded(empty_pool)


async def test_an_untouched_rerun_applies_nothing_and_keeps_the_checksums(
    empty_pool: asyncpg.Pool,
) -> None:
    first = await migrate(empty_pool)
    before = await recorded(empty_pool)

    assert await migrate(empty_pool) == []

    assert first == sorted(p.name for p in SHIPPED.glob("*.sql"))
    assert await recorded(empty_pool) == before
    assert before == {p.name: sha256(p) for p in SHIPPED.glob("*.sql")}


async def test_a_database_from_before_the_checksums_gets_them_filled(
    empty_pool: asyncpg.Pool, folder: Path
) -> None:
    # What the runner before 0070 left behind: names only, in a table without a checksum column.
    await empty_pool.execute(
        "CREATE TABLE schema_migrations ("
        " name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
    older = sorted(p for p in SHIPPED.glob("*.sql") if p.name < CHECKSUMS)
    for path in older:
        await empty_pool.execute(path.read_text())
        await empty_pool.execute("INSERT INTO schema_migrations (name) VALUES ($1)", path.name)

    # 0070 itself, then every migration numbered after it.
    assert await migrate(empty_pool) == sorted(
        p.name for p in SHIPPED.glob("*.sql") if p.name >= CHECKSUMS)

    assert await recorded(empty_pool) == {p.name: sha256(p) for p in SHIPPED.glob("*.sql")}
    # From now on an edit of one of those older files is caught too.
    edited = folder / older[0].name
    edited.write_text(edited.read_text() + "\n-- edited\n")
    with pytest.raises(MigrationChecksumError, match=older[0].name):
        await migrate(empty_pool, folder=folder)


async def migrated_before(pool: asyncpg.Pool, folder: Path, tmp_path: Path, first: str) -> Path:
    """``pool``'s database migrated up to the file before ``first``; the later files wait in
    the returned folder (``restore`` puts them back)."""
    later = tmp_path / "later"
    later.mkdir()
    for f in sorted(folder.glob("*.sql")):
        if f.name >= first:
            f.rename(later / f.name)
    await migrate(pool, folder=folder)
    return later


def restore(later: Path, folder: Path) -> None:
    for f in later.iterdir():
        f.rename(folder / f.name)


async def test_a_database_with_audit_chains_migrated_to_head_shards_verifies_clean(
    empty_pool: asyncpg.Pool, folder: Path, tmp_path: Path
) -> None:
    # Chains written under the one-head-per-tenant schema (before 0132), then migrated.
    later = await migrated_before(empty_pool, folder, tmp_path, "0132")
    wfs = [f"event/t1/e{i}" for i in range(12)] + ["event/t2/e0", "event/t2/e1"]
    for seq in (1, 2):
        for wf in wfs:
            await empty_pool.execute(
                "INSERT INTO state_transitions (workflow_id, seq, from_state, to_state, actor,"
                " reason) VALUES ($1, $2, 'RECEIVED', 'VALIDATED', 'system', 'ok')", wf, seq)
    restore(later, folder)

    assert "0132_audit_chain_head_shards.sql" in await migrate(empty_pool, folder=folder)

    assert await AuditStore(empty_pool).verify_all() == (len(wfs), [])
    heads = await empty_pool.fetch("SELECT tenant_id, shard, entries FROM audit_chain_heads")
    expected: dict[tuple[str, int], int] = {}
    for wf in wfs:
        key = (wf.split("/")[1], chain_shard(wf))
        expected[key] = expected.get(key, 0) + 2
    assert {(r["tenant_id"], r["shard"]): r["entries"] for r in heads} == expected
    # New entries chain on after the migrated ones and keep their shard's head in step.
    await empty_pool.execute(
        "INSERT INTO state_transitions (workflow_id, seq, from_state, to_state, actor, reason)"
        " VALUES ('event/t1/e0', 3, 'VALIDATED', 'DRAFTED', 'system', 'ok')")
    assert await AuditStore(empty_pool).verify_all() == (len(wfs), [])


async def test_a_head_that_disagreed_before_the_shards_still_disagrees_after(
    empty_pool: asyncpg.Pool, folder: Path, tmp_path: Path
) -> None:
    # A whole chain deleted under the one-head-per-tenant schema: the migration's rebuild of the
    # heads from the rows must not erase that evidence.
    later = await migrated_before(empty_pool, folder, tmp_path, "0132")
    for wf in ("event/t1/kept", "event/t1/gone"):
        for seq in (1, 2):
            await empty_pool.execute(
                "INSERT INTO state_transitions (workflow_id, seq, from_state, to_state, actor,"
                " reason) VALUES ($1, $2, 'RECEIVED', 'VALIDATED', 'system', 'ok')", wf, seq)
    await empty_pool.execute("DELETE FROM state_transitions WHERE workflow_id = 'event/t1/gone'")
    await empty_pool.execute("DELETE FROM audit_chain WHERE workflow_id = 'event/t1/gone'")
    restore(later, folder)

    assert "0132_audit_chain_head_shards.sql" in await migrate(empty_pool, folder=folder)

    _, problems = await AuditStore(empty_pool).verify_all()
    assert [p.source for p in problems] == ["audit_chain_heads"]
    assert "entries" in problems[0].problem


@pytest.mark.parametrize("dropped_by_hand", [True, False])
async def test_0138_waits_for_the_chains_writers_unless_the_index_was_dropped_first(
    empty_pool: asyncpg.Pool, folder: Path, tmp_path: Path, dropped_by_hand: bool,
) -> None:
    # ADR 0089: the runner's transaction cannot drop CONCURRENTLY, so the drop waits for the
    # transactions writing the chain; an operator who dropped it CONCURRENTLY first is not held.
    later = await migrated_before(empty_pool, folder, tmp_path, "0138")
    if dropped_by_hand:
        await empty_pool.execute("DROP INDEX CONCURRENTLY IF EXISTS audit_chain_tenant")
    restore(later, folder)
    # The pool's two connections: one writes and holds its transaction open, one migrates.
    async with empty_pool.acquire() as writer, writer.transaction():
        await writer.execute(  # an audited write not committed yet: it holds audit_chain
            "INSERT INTO state_transitions (workflow_id, seq, from_state, to_state, actor,"
            " reason) VALUES ('event/t1/e0', 1, NULL, 'RECEIVED', 'system', 'ok')")
        migrating = asyncio.create_task(migrate(empty_pool, folder=folder))
        if dropped_by_hand:
            await eventually(migrating.done, "the migration applied beside the open write")
        else:
            await eventually(lambda: lock_waits(writer), "the migration waiting for audit_chain")
            assert not migrating.done()
    assert await migrating == ["0138_drop_audit_chain_tenant.sql"]
    assert await empty_pool.fetchval("SELECT to_regclass('audit_chain_tenant')") is None
    assert await AuditStore(empty_pool).verify_all("t1") == (1, [])


async def lock_waits(conn: asyncpg.Connection) -> int:
    """Lock requests on audit_chain not granted yet (pg_locks is read live, not from the
    transaction's snapshot as pg_stat_activity is)."""
    return int(await conn.fetchval(
        "SELECT count(*) FROM pg_locks WHERE NOT granted"
        " AND relation = 'audit_chain'::regclass"))


async def test_an_up_to_date_start_does_not_wait_for_a_migration_in_progress(
    empty_pool: asyncpg.Pool, folder: Path
) -> None:
    """ADR 0091: nothing to apply is only read, with no lock, so workers of the release already
    migrated start while a migrate Job holds the lock; one with a file to apply still waits."""
    await migrate(empty_pool, folder=folder)
    async with empty_pool.acquire() as job, job.transaction():
        await job.execute("SELECT pg_advisory_xact_lock($1)", pool_module._MIGRATION_LOCK)
        async with asyncio.timeout(10):
            assert await migrate(empty_pool, folder=folder) == []
        (folder / "0999_later.sql").write_text("CREATE TABLE later_table (id int);\n")
        waiting = asyncio.create_task(migrate(empty_pool, folder=folder))
        await asyncio.sleep(0.5)
        assert not waiting.done()
    assert await waiting == ["0999_later.sql"]
