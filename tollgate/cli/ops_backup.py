"""`tollgate ops backup FILE` and `tollgate ops restore FILE`: state and receipts together; and
`tollgate ops migrate`, the schema's one-off job."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

import click

from tollgate.cli.common import Command, pool
from tollgate.cli.params import EdgePath
from tollgate.runtime.exits import Exit, postgres_failure

if TYPE_CHECKING:
    from tollgate.config.settings import Settings


async def _dsn(s: Settings) -> str:
    """The database URL, once PostgreSQL answered it: one that does not answer or refuses is
    said as every command says it (exit 3 or 1: ADR 0090), not in pg_dump's words."""
    async with pool(s):
        assert s.dsn
        return s.dsn


@click.command("backup")
@click.argument("file", type=EdgePath(dir_okay=False, path_type=Path))
def backup_cmd(file: Path) -> Command:
    """Write PostgreSQL's state, receipts, decisions and dead letters to FILE (one dump, so
    they come back from the same instant)."""

    async def go(s: Settings) -> int:
        from tollgate.ops.backup import backup

        await asyncio.to_thread(backup, await _dsn(s), file)
        click.echo(f"backup written to {file}")
        return Exit.OK

    return go


@click.command("restore")
@click.argument("file", type=EdgePath(dir_okay=False, path_type=Path))
@click.option("--yes", is_flag=True, help="confirm: the database is replaced by the backup")
def restore_cmd(file: Path, yes: bool) -> Command:
    """Replace the database with the backup in FILE, then let the reconciler and the sweep
    settle what happened since (docs/runbook.md)."""
    if not yes:
        raise click.UsageError("restore replaces the database: add --yes to confirm")

    async def go(s: Settings) -> int:
        from tollgate.ops.backup import restore

        await asyncio.to_thread(restore, await _dsn(s), file)
        click.echo(f"restored from {file}; now run `tollgate ops sweep` so receipts meet the "
                   "targets again")
        return Exit.OK

    return go


@click.command()
def migrate() -> Command:
    """Apply the database migrations not applied yet, then stop (a deployment's one-off job;
    every pool also applies them when it opens)."""

    async def go(s: Settings) -> int:
        from adapters.postgres.pool import migrate as apply_migrations

        async with pool(s) as p:
            try:
                applied = await apply_migrations(p)
            except Exception as exc:  # a file edited since, a right the user lacks: one line
                if (failure := postgres_failure(exc)) is None:
                    raise
                raise failure from exc
        click.echo(f"applied {', '.join(applied)}" if applied else "schema up to date")
        return Exit.OK

    return go
