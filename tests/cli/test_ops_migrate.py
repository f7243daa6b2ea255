"""`tollgate ops migrate` against a schema whose applied migration no longer matches its file:
one line naming the file, exit 1 (docs/cli.md), nothing applied (docs/adr/0024)."""

from __future__ import annotations

from pathlib import Path

import asyncpg

from tests.cli.helpers import base_env, tollgate
from tests.pg_databases import empty_database
from tollgate.runtime.exits import Exit


async def test_an_edited_applied_migration_fails_in_one_line_naming_it(
    pg_server: str, tmp_path: Path
) -> None:
    env = base_env(tmp_path / "state", DATABASE_URL=await empty_database(pg_server, "m"))
    assert tollgate("ops", "migrate", env=env).code == Exit.OK
    conn = await asyncpg.connect(env["DATABASE_URL"])
    try:
        # The same as editing the shipped file after it was applied: the bytes no longer match.
        await conn.execute("UPDATE schema_migrations SET checksum = repeat('0', 64)"
                           " WHERE name = '0020_tagging.sql'")
    finally:
        await conn.close()

    for argv in (["ops", "migrate"], ["ops", "switches"]):
        said = tollgate(*argv, env=env)
        assert said.clean(), said.text
        assert said.code == Exit.REFUSED, said.text
        assert said.err.strip().splitlines() == [
            "tollgate: migration 0020_tagging.sql was edited after it was applied: restore the "
            "file and put the change in a new numbered migration"]


async def test_a_reading_command_on_a_database_nobody_migrated_says_to_migrate(
    pg_server: str, tmp_path: Path
) -> None:
    """A command whose pool applies no migration (``ops status``: PostgreSQL first, Temporal
    only probed) ended in ``unexpected UndefinedTableError``, exit 9, as if a bug."""
    env = base_env(tmp_path / "state", DATABASE_URL=await empty_database(pg_server, "m"))
    said = tollgate("ops", "status", env=env)
    assert said.clean(), said.text
    assert (said.code, said.err.strip().splitlines()) == (Exit.REFUSED, [
        "tollgate: no Tollgate schema in this database: run `tollgate ops migrate` (or "
        "check DATABASE_URL's database)"]), said.text
