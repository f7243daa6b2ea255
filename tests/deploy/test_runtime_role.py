"""Workers, ``tollgate serve`` and the CLI run as a least-privilege PostgreSQL role: the grants
docs/deploy.md gives, executed here as written (the doc cannot drift from what works), and no
right to create in the schema. A pool on a database the schema's owner migrated only reads
``schema_migrations``; one with a migration left to apply says, in one line, that the owner runs
``tollgate ops migrate`` (ADR 0091). Before, every pool ran ``CREATE TABLE IF NOT EXISTS
schema_migrations`` and an UPDATE of its checksums, so such a role could start nothing."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import asyncpg
import pytest
from temporalio.testing import WorkflowEnvironment

from adapters.postgres import pool as pool_module
from adapters.postgres.audit import AuditStore
from adapters.postgres.pool import (
    MigrationChecksumError,
    MigrationsNotAppliedError,
    create_pool,
    migrate,
)
from contracts import EventState
from tests.cli.helpers import ROOT, Said, base_env, tollgate
from tests.conftest import signed_event, start, worker_settings
from tests.deploy.postgres_roles_support import PASSWORD, as_user, one_line
from tests.pg_databases import empty_database, fresh_database
from tests.ports import free_port
from tests.workflows.review_helpers import approve, new_customer
from tollgate.dev.standins import StandIns
from tollgate.runtime.exits import Exit
from tollgate.runtime.workers import draft_worker, main_worker

DOC = ROOT / "docs" / "deploy.md"
SHIPPED = Path(pool_module.__file__).parent / "migrations"
LAST = sorted(p.name for p in SHIPPED.glob("*.sql"))[-1]
PENDING = (f"1 migration is not applied (first: {LAST}) and this role may not apply it: run "
           "`tollgate ops migrate` as the schema's owner")


def documented_grants() -> str:
    """The SQL block of docs/deploy.md's section on the two roles, as an operator copies it."""
    section = DOC.read_text().split("## PostgreSQL: the schema's owner and the runtime role")[1]
    found = re.search(r"```sql\n(.*?)```", section, re.S)
    assert found, "docs/deploy.md lost its grants block"
    return found.group(1)


async def runtime_role(database: str) -> str:
    """A new login role given exactly the documented grants on ``database`` (the server's own
    user is the schema's owner there, as the template was migrated by it); its URL."""
    role = f"rt_{uuid.uuid4().hex[:10]}"
    owner = await asyncpg.connect(database)
    try:
        # A password as well: ignored by the tests' own server (it trusts local logins), needed
        # by another one (DATABASE_URL) that asks for it.
        await owner.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{PASSWORD}'")
        me = await owner.fetchval("SELECT current_user")
        await owner.execute(documented_grants().replace("tollgate_runtime", role)
                            .replace("tollgate_owner", f'"{me}"'))
    finally:
        await owner.close()
    return as_user(database, role, PASSWORD)


async def test_the_documented_role_takes_an_approved_event_to_its_receipt(
        pg_server: str, env: WorkflowEnvironment, standins: StandIns, tmp_path: Path) -> None:
    """The pool opens (no DDL, no write to ``schema_migrations``, which the role may not write),
    and a main worker on it records the event, its review, its receipt and the audit chain."""
    runtime = await runtime_role(await fresh_database(pg_server, "rt"))
    queue = f"tq-{uuid.uuid4().hex[:8]}"
    settings = worker_settings(runtime, standins, tmp_path, queue)
    async with main_worker(env.client, settings), draft_worker(env.client, settings):
        handle = await start(env.client, queue, signed_event(new_customer(standins)))
        await approve(handle, reason="fine")
        outcome = await handle.result()
    assert outcome.state == EventState.SUCCEEDED

    pool = await create_pool(runtime, max_size=1)
    try:
        receipt = await pool.fetchval(
            "SELECT status FROM receipts WHERE workflow_id = $1", handle.id)
        sources = {r["source"] for r in await pool.fetch(
            "SELECT DISTINCT source FROM audit_chain WHERE workflow_id = $1", handle.id)}
        assert (receipt, await AuditStore(pool).verify_all("acme")) == (
            "SUCCEEDED", (await pool.fetchval(
                "SELECT count(DISTINCT workflow_id) FROM audit_chain WHERE tenant_id = 'acme'"),
                []))
        assert {"state_transitions", "review_decisions", "receipts"} <= sources
        # Least privilege: nothing made in the schema, the chain append-only, nothing it
        # covers deleted.
        for refused in ["CREATE TABLE made_by_the_runtime (id int)",
                        "UPDATE audit_chain SET op = op", "DELETE FROM audit_chain",
                        *(f"DELETE FROM {t}" for t in ("state_transitions", "review_decisions",
                                                       "receipts", "tenant_contacts",
                                                       "audit_chain_heads")),
                        "UPDATE schema_migrations SET checksum = checksum"]:
            with pytest.raises(asyncpg.InsufficientPrivilegeError):
                await pool.execute(refused)
    finally:
        await pool.close()


async def test_a_migration_the_runtime_may_not_apply_is_one_line_until_the_owner_applies_it(
        pg_server: str, tmp_path: Path) -> None:
    """In process, with one more migration of the test's: the role is told, its pool applies
    nothing; the owner applies it, and the role writes the new table (default privileges)."""
    database = await fresh_database(pg_server, "rt")
    runtime = await runtime_role(database)
    folder = tmp_path / "migrations"
    shutil.copytree(SHIPPED, folder, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    (folder / "0999_later.sql").write_text(
        "CREATE TABLE later_rows (id bigserial PRIMARY KEY, note text);\n")
    pool = await asyncpg.create_pool(runtime, min_size=1, max_size=1)
    try:
        with pytest.raises(MigrationsNotAppliedError) as told:
            await migrate(pool, folder=folder)
        assert str(told.value) == (
            "1 migration is not applied (first: 0999_later.sql) and this role may not apply "
            "it: run `tollgate ops migrate` as the schema's owner")
        edited = folder / "0002_review.sql"
        shutil.copy(edited, tmp_path / "kept.sql")
        edited.write_text(edited.read_text() + "\n-- edited\n")
        with pytest.raises(MigrationChecksumError, match=r"0002_review\.sql"):
            await migrate(pool, folder=folder)  # an edit is said first, to any role
        shutil.copy(tmp_path / "kept.sql", edited)

        owner = await asyncpg.create_pool(database, min_size=1, max_size=1)
        try:
            assert await migrate(owner, folder=folder) == ["0999_later.sql"]
        finally:
            await owner.close()
        assert await migrate(pool, folder=folder) == []
        await pool.execute("INSERT INTO later_rows (note) VALUES ('written by the runtime')")
    finally:
        await pool.close()


@pytest.fixture
async def behind(pg_server: str, tmp_path: Path) -> tuple[str, str]:
    """A database the owner migrated up to the file before the last shipped one, with the
    documented runtime role: (the owner's URL, the runtime role's)."""
    database = await empty_database(pg_server, "rt")
    folder = tmp_path / "all_but_the_last"
    folder.mkdir()
    for f in SHIPPED.glob("*.sql"):
        if f.name != LAST:
            shutil.copy(f, folder / f.name)
    owner = await asyncpg.create_pool(database, min_size=1, max_size=1)
    try:
        await migrate(owner, folder=folder)
    finally:
        await owner.close()
    return database, await runtime_role(database)


def test_the_cli_serve_and_a_worker_say_it_and_the_owners_migrate_applies_it(
        behind: tuple[str, str], env: WorkflowEnvironment, tmp_path: Path) -> None:
    owner, runtime = behind
    state = base_env(tmp_path / "state", DATABASE_URL=runtime)
    said = tollgate("ops", "switches", env=state)
    assert (said.code, one_line(said)) == (Exit.REFUSED, [f"tollgate: {PENDING}"])
    said = tollgate("serve", "--port", str(free_port()), env=state)
    assert (said.code, one_line(said, json_lines=True)) == (Exit.REFUSED, [f"tollgate: {PENDING}"])
    assert "unused" not in said.text and urlsplit(runtime).path not in said.text

    worker_env = {**state, "TEMPORAL_ADDRESS": env.client.service_client.config.target_host,
                  "TOLLGATE_CRM_URL": f"http://127.0.0.1:{free_port()}",
                  "TOLLGATE_MESSAGING_URL": f"http://127.0.0.1:{free_port()}",
                  "TOLLGATE_ACTION_TOKEN_KEY": uuid.uuid4().hex}
    done = subprocess.run([sys.executable, "worker.py"], env=worker_env, cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=False)
    said = Said(done.returncode, done.stdout, done.stderr)
    assert (said.code, one_line(said, json_lines=True)) == (1, [PENDING])

    applied = tollgate("ops", "migrate", env=base_env(tmp_path / "owner", DATABASE_URL=owner))
    assert (applied.code, applied.out.strip()) == (Exit.OK, f"applied {LAST}"), applied.text
    said = tollgate("ops", "switches", env=state)
    assert said.code == Exit.OK, said.text
