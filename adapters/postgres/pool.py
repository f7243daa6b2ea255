"""The PostgreSQL pool every store of a process shares, and the migrations applied on start.

One pool per process; the numbered SQL files in ``adapters/postgres/migrations`` are applied
once, in order, under an advisory lock so workers starting together do not race. Each applied
file's sha256 is recorded: a file edited after it was applied stops the start-up instead of being
skipped, since the database would no longer have the schema the file says (docs/adr/0024). A
database with nothing to apply is only read, so a least-privilege runtime role starts on a
database the schema's owner migrated, and one with something to apply is told to have the owner
apply it (docs/adr/0091).
"""

from __future__ import annotations

import hashlib
from importlib import resources
from importlib.resources.abc import Traversable

import asyncpg
from asyncpg.pool import PoolConnectionProxy

from contracts.errors import RetryableError

_MIGRATION_LOCK = 0x70_11_6A_7E  # any constant; serialises concurrent start-ups


class MigrationChecksumError(RuntimeError):
    """An applied migration's file no longer has the bytes it had when it was applied."""

    def __init__(self, name: str) -> None:
        super().__init__(f"migration {name} was edited after it was applied: restore the file "
                         "and put the change in a new numbered migration")
        self.name = name


class MigrationsNotAppliedError(RuntimeError):
    """Migrations are left to apply and PostgreSQL refuses this role the right to apply them:
    a runtime role on a database its owner has not migrated to this release yet."""

    def __init__(self, pending: list[str]) -> None:
        many = len(pending) != 1
        what = (f"{len(pending)} migration{'s are' if many else ' is'} not applied (first: "
                f"{pending[0]}) and this role may not apply {'them' if many else 'it'}"
                if pending else "the applied migrations' checksums are not recorded yet "
                "and this role may not record them")
        super().__init__(f"{what}: run `tollgate ops migrate` as the schema's owner")
        self.pending = pending


async def _keep_session(_: asyncpg.Connection) -> None:
    """Released connections skip asyncpg's reset query (advisory unlock, CLOSE ALL, UNLISTEN,
    RESET ALL): the store leaves no session state behind (no LISTEN, no session advisory locks,
    no SET, no cursors), and asyncpg still rolls back a transaction left open. It was 14 of 34
    round trips per event (docs/performance.md)."""


async def create_pool(dsn: str, *, min_size: int = 1, max_size: int = 10) -> asyncpg.Pool:
    try:
        pool = await asyncpg.create_pool(dsn, min_size=min_size, max_size=max_size,
                                         reset=_keep_session)
    except (OSError, asyncpg.PostgresError, ValueError) as exc:
        # ValueError: asyncpg's URL parser (a port that is no number); the cause says which.
        reason = f"cannot connect to PostgreSQL ({type(exc).__name__})"
        raise RetryableError("db_unreachable", reason) from exc
    await migrate(pool)
    return pool


async def migrate(pool: asyncpg.Pool, *, folder: Traversable | None = None) -> list[str]:
    """Apply the numbered SQL files not applied yet, in order, and return their names.

    A database that already has every file recorded with its checksum is only read, in one
    read-only snapshot: no lock, no DDL, no write, so a role with no right to change the
    schema starts on a database its owner migrated (docs/adr/0091).

    Args:
        pool: the database to migrate.
        folder: where the SQL files are; the package's ``migrations`` folder unless a test
            hands another.

    Raises:
        MigrationChecksumError: an applied file's bytes differ from the recorded checksum;
            nothing is applied then.
        MigrationsNotAppliedError: something is left to apply (or a checksum to record) and
            PostgreSQL refuses this role the right to; nothing is applied then.
    """
    source = folder or resources.files("adapters.postgres.migrations")
    files = sorted((f for f in source.iterdir() if f.name.endswith(".sql")),
                   key=lambda f: f.name)
    sums = {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in files}
    async with pool.acquire() as conn:
        # REPEATABLE READ: the three reads see one snapshot, that of a migration committed
        # whole or not at all (each file and its row commit in the same transaction).
        async with conn.transaction(isolation="repeatable_read", readonly=True):
            recorded = await _recorded(conn)
        if recorded is not None and _checked(recorded, sums) == []:
            return []
        try:
            async with conn.transaction():
                return await _apply(conn, files, sums)
        except asyncpg.InsufficientPrivilegeError as exc:
            pending = _checked(recorded or {}, sums)
            raise MigrationsNotAppliedError(pending) from exc


def _checked(recorded: dict[str, str | None], sums: dict[str, str]) -> list[str]:
    """The files not applied yet, or applied with no checksum recorded; an applied file's
    checksum that differs raises: every one is checked before anything runs, so a start that
    fails applies nothing rather than half the new files on a schema not what it says."""
    for name, digest in sums.items():
        if recorded.get(name) not in (None, digest):
            raise MigrationChecksumError(name)
    return [name for name in sums if recorded.get(name) is None]


async def _apply(conn: PoolConnectionProxy, files: list[Traversable],
                 sums: dict[str, str]) -> list[str]:
    """The writing path, under the lock that serialises start-ups applying migrations."""
    await conn.execute("SELECT pg_advisory_xact_lock($1)", _MIGRATION_LOCK)
    # Read again under the lock: whoever held it may have applied everything meanwhile.
    recorded = await _recorded(conn)
    if recorded is None:
        await conn.execute(
            "CREATE TABLE schema_migrations ("
            " name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
        recorded = {}
    if not _checked(recorded, sums):
        return []
    applied: list[str] = []
    for f in files:
        if f.name in recorded:
            continue
        await conn.execute(f.read_text())
        await conn.execute("INSERT INTO schema_migrations (name) VALUES ($1)", f.name)
        applied.append(f.name)
    # One fill for the files applied now and for rows from before the checksum column
    # (migration 0070), whose bytes are trusted the first time they are seen.
    await conn.executemany(
        "UPDATE schema_migrations SET checksum = $2 WHERE name = $1 AND checksum IS NULL",
        list(sums.items()))
    return applied


async def _recorded(conn: PoolConnectionProxy) -> dict[str, str | None] | None:
    """Applied names and their checksums (None where none is recorded yet); None when there
    is no ``schema_migrations`` table at all."""
    if await conn.fetchval("SELECT to_regclass('schema_migrations')") is None:
        return None
    has_column = await conn.fetchval(
        "SELECT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema ="
        " current_schema() AND table_name = 'schema_migrations' AND column_name = 'checksum')")
    if not has_column:
        return {r["name"]: None for r in await conn.fetch("SELECT name FROM schema_migrations")}
    rows = await conn.fetch("SELECT name, checksum FROM schema_migrations")
    return {r["name"]: r["checksum"] for r in rows}
