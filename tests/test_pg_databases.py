"""tests/pg_databases.py: a module's database comes already migrated, as a copy of the test
process's template; starting on it applies nothing yet still checks every recorded migration
against its file (docs/adr/0024), and copies share no rows."""

from __future__ import annotations

import hashlib
from pathlib import Path

import asyncpg
import pytest

from adapters.postgres import pool as pool_module
from adapters.postgres.pool import MigrationChecksumError, create_pool, migrate
from tests.pg_databases import empty_database, fresh_database, migrated_template, with_database

SHIPPED = sorted(Path(pool_module.__file__).with_name("migrations").glob("*.sql"))


async def _fetch(url: str, query: str) -> list[asyncpg.Record]:
    conn = await asyncpg.connect(url)
    try:
        return await conn.fetch(query)
    finally:
        await conn.close()


async def test_a_modules_database_has_every_migration_recorded_and_applies_none(
        database_url: str) -> None:
    recorded = await _fetch(database_url, "SELECT name, checksum FROM schema_migrations")
    assert sorted((r["name"], r["checksum"]) for r in recorded) == [
        (f.name, hashlib.sha256(f.read_bytes()).hexdigest()) for f in SHIPPED]
    pool = await create_pool(database_url, max_size=1)
    try:
        assert await migrate(pool) == []
    finally:
        await pool.close()


async def test_a_copy_whose_applied_migration_differs_from_its_file_does_not_start(
        pg_server: str) -> None:
    url = await fresh_database(pg_server)
    conn = await asyncpg.connect(url)
    try:
        await conn.execute("UPDATE schema_migrations SET checksum = repeat('0', 64)"
                           " WHERE name = '0020_tagging.sql'")
    finally:
        await conn.close()
    with pytest.raises(MigrationChecksumError, match=r"0020_tagging\.sql"):
        await create_pool(url, max_size=1)


async def test_copies_share_no_rows_and_the_template_takes_no_connections(
        pg_server: str) -> None:
    first, second = await fresh_database(pg_server), await fresh_database(pg_server)
    conn = await asyncpg.connect(first)
    try:
        await conn.execute("INSERT INTO kill_switches (adapter, tenant_id, closed, reason,"
                           " changed_by) VALUES ('messaging', 'acme', true, 'incident', 'kim')")
    finally:
        await conn.close()
    assert len(await _fetch(first, "SELECT 1 FROM kill_switches")) == 1
    assert await _fetch(second, "SELECT 1 FROM kill_switches") == []
    template = with_database(pg_server, await migrated_template(pg_server))
    with pytest.raises(asyncpg.PostgresError, match="not currently accepting connections"):
        await asyncpg.connect(template)


async def test_an_empty_database_has_no_schema(pg_server: str) -> None:
    url = await empty_database(pg_server)
    assert await _fetch(url, "SELECT to_regclass('schema_migrations') IS NULL AS none") == [
        (True,)]
