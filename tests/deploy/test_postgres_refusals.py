"""PostgreSQL that answers and refuses (a wrong password, a database that does not exist, a
role without rights) is said as such by every process and command that opens a pool at start,
in one line with a documented exit code (docs/cli.md), never the URL: not "cannot reach
PostgreSQL … start the stack", which sends an operator to the wrong place (ADR 0090). Against
the tests' real PostgreSQL; a wrong password needs a role that logs in by password, which the
embedded server's pg_hba.conf (trust) gets a line for."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import asyncpg
import pytest
from temporalio.testing import WorkflowEnvironment

from contracts.errors import RetryableError
from tests.cli.helpers import ROOT, Said, base_env, tollgate
from tests.deploy.postgres_roles_support import PASSWORD, WRONG, as_user, one_line
from tests.eventually import eventually
from tests.pg_databases import empty_database, fresh_database, with_database
from tests.ports import free_port
from tollgate.runtime.exits import Exit, postgres_failure

LINES = {
    "wrong password": "PostgreSQL refused (InvalidPasswordError): check DATABASE_URL's user "
                      "and password",
    "no database": "PostgreSQL refused (InvalidCatalogNameError): check DATABASE_URL's "
                   "database (no database of that name exists)",
}
#: A URL asyncpg's parser refuses before it asks anyone: said as the CLI's configuration line.
NOT_A_PORT = f"postgresql://tollgate:{PASSWORD}@127.0.0.1:5432x/tollgate"
NOT_A_PORT_LINE = ("DATABASE_URL is refused by the PostgreSQL client (ValueError): write it "
                   "postgresql://USER:PASSWORD@HOST:PORT/DB")


@pytest.fixture(scope="module")
async def refused(pg_server: str) -> dict[str, str]:
    """A URL per refusal: a real role that logs in by password, given the wrong one; the
    server's own user (with a password the trusting server ignores), naming a database that
    does not exist."""
    missing = with_database(pg_server, f"none_{uuid.uuid4().hex[:8]}")
    if os.environ.get("DATABASE_URL"):
        return {"no database": missing}  # another server: its own password, its own pg_hba
    role = f"pw_{uuid.uuid4().hex[:10]}"
    admin = await asyncpg.connect(pg_server)
    try:
        hba = Path(await admin.fetchval("SHOW hba_file"))
        # First match wins: this role alone logs in by password, every other stays trusted.
        hba.write_text("".join(f"{kind} all {role} {where} scram-sha-256\n" for kind, where in
                               [("local", ""), ("host", "127.0.0.1/32"), ("host", "::1/128")])
                       + hba.read_text())
        await admin.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{PASSWORD}'")
        await admin.execute("SELECT pg_reload_conf()")
    finally:
        await admin.close()
    database = await fresh_database(pg_server)

    async def wrong_refused() -> bool:
        try:
            await (await asyncpg.connect(as_user(database, role, WRONG))).close()
        except asyncpg.InvalidPasswordError:
            return True
        return False

    await eventually(wrong_refused, "the server reading its new pg_hba.conf")
    # The right password lets the role in: what the wrong one meets is about the password.
    await (await asyncpg.connect(as_user(database, role, PASSWORD))).close()
    return {"wrong password": as_user(database, role, WRONG),
            "no database": as_user(missing, urlsplit(pg_server).username or "postgres", WRONG)}


def url(refused: dict[str, str], case: str) -> str:
    if case not in refused:
        pytest.skip("a wrong password needs the tests' own PostgreSQL: its pg_hba.conf gets a "
                    "password line for a role of the test's")
    return refused[case]


@pytest.mark.parametrize("case", ["wrong password", "no database"])
@pytest.mark.parametrize("argv", [["ops", "status"], ["ops", "switches"],
                                  ["ops", "backup", "{tmp}/dump"]])
def test_a_command_says_what_postgresql_refused(
        refused: dict[str, str], tmp_path: Path, case: str, argv: list[str]) -> None:
    """``ops status`` opens its pool bare, ``ops switches`` migrates it first, ``ops backup``
    hands the URL to pg_dump once PostgreSQL answered: all three said "cannot reach PostgreSQL
    … start the stack", exit 3 (the backup: pg_dump's words, exit 1)."""
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    said = tollgate(*argv, env=base_env(tmp_path / "state", DATABASE_URL=url(refused, case)))
    assert (said.code, one_line(said)) == (Exit.REFUSED, [f"tollgate: {LINES[case]}"])
    assert not (tmp_path / "dump").exists()


@pytest.mark.parametrize(("argv", "schema"), [(["ops", "migrate"], False),
                                            (["ops", "status"], True)])
async def test_a_role_without_rights_is_one_line(
        pg_server: str, tmp_path: Path, argv: list[str], schema: bool) -> None:
    """Creating the schema (``ops migrate`` on an empty database), or reading its tables
    (``ops status``, whose pool applies no migration): both were ``unexpected
    InsufficientPrivilegeError``, exit 9, as if a bug. Migrations the role may not apply are
    said as such, naming the command the schema's owner runs (ADR 0091)."""
    weak = f"weak_{uuid.uuid4().hex[:10]}"
    admin = await asyncpg.connect(pg_server)
    try:
        await admin.execute(f"CREATE ROLE {weak} LOGIN")  # no right in public, on no table
    finally:
        await admin.close()
    database = await (fresh_database(pg_server) if schema else empty_database(pg_server, "w"))
    said = tollgate(*argv, env=base_env(tmp_path / "state",
                                        DATABASE_URL=as_user(database, weak, "any")))
    files = sorted((ROOT / "adapters" / "postgres" / "migrations").glob("*.sql"))
    assert (said.code, one_line(said)) == (Exit.REFUSED, [
        f"tollgate: {len(files)} migrations are not applied (first: {files[0].name}) and this "
        "role may not apply them: run `tollgate ops migrate` as the schema's owner"
        if not schema else
        "tollgate: PostgreSQL refused (InsufficientPrivilegeError): check the rights of "
        "DATABASE_URL's user (it connects, reads and writes the tables: docs/deploy.md gives "
        "the grants)"])


@pytest.mark.parametrize("case", ["wrong password", "no database"])
def test_tollgate_serve_says_what_postgresql_refused(
        refused: dict[str, str], tmp_path: Path, case: str) -> None:
    said = tollgate("serve", "--port", str(free_port()),
                    env=base_env(tmp_path, DATABASE_URL=url(refused, case)))
    # Its start's warnings are JSON log lines (ADR 0086).
    assert (said.code, one_line(said, json_lines=True)) == (
        Exit.REFUSED, [f"tollgate: {LINES[case]}"])


def test_tollgate_serve_says_a_port_that_is_no_number_is_the_urls(tmp_path: Path) -> None:
    """It was asyncpg's ValueError as a traceback: ``create_pool`` let it through unwrapped."""
    said = tollgate("serve", "--port", str(free_port()),
                    env=base_env(tmp_path, DATABASE_URL=NOT_A_PORT))
    assert (said.code, one_line(said, json_lines=True)) == (
        Exit.CONFIG, [f"tollgate: {NOT_A_PORT_LINE}"])


@pytest.mark.parametrize("case", ["wrong password", "no database", "not a port"])
def test_the_worker_script_says_what_postgresql_refused(
        refused: dict[str, str], env: WorkflowEnvironment, tmp_path: Path, case: str) -> None:
    """Temporal answers; the pool is refused. A worker process exits 1 with every start line
    (docs/deploy.md). A port that is no number was asyncpg's ValueError as a traceback."""
    variables = base_env(
        tmp_path, DATABASE_URL=NOT_A_PORT if case == "not a port" else url(refused, case),
        TEMPORAL_ADDRESS=env.client.service_client.config.target_host,
        TOLLGATE_CRM_URL=f"http://127.0.0.1:{free_port()}",
        TOLLGATE_MESSAGING_URL=f"http://127.0.0.1:{free_port()}",
        TOLLGATE_ACTION_TOKEN_KEY=uuid.uuid4().hex)
    done = subprocess.run([sys.executable, "worker.py"], env=variables, cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=False)
    said = Said(done.returncode, done.stdout, done.stderr)
    assert (said.code, one_line(said, json_lines=True)) == (
        1, [LINES.get(case, NOT_A_PORT_LINE)])


def dev_stack(tmp_path: Path, database_url: str, temporal_address: str) -> Said:
    """``tollgate dev`` on outside servers (DATABASE_URL and TEMPORAL_ADDRESS set), which it
    does not start: it stops at the first that fails."""
    ports = {f"TOLLGATE_{name}_PORT": str(free_port())
             for name in ("UI", "CRM", "MESSAGING", "HTTP", "METRICS", "SDK_METRICS")}
    return tollgate("dev", env=base_env(
        tmp_path / "state", DATABASE_URL=database_url, TEMPORAL_ADDRESS=temporal_address,
        TOLLGATE_DRAFT_PROVIDER="offline", **ports), timeout=120)


def test_tollgate_dev_on_a_database_url_says_what_postgresql_refused(
        refused: dict[str, str], env: WorkflowEnvironment, tmp_path: Path) -> None:
    """It was ``unexpected RetryableError: … (InvalidPasswordError)``, exit 9."""
    said = dev_stack(tmp_path, url(refused, "wrong password"),
                     env.client.service_client.config.target_host)
    assert (said.code, one_line(said, json_lines=True)) == (
        Exit.REFUSED, [f"tollgate: {LINES['wrong password']}"])


def test_tollgate_dev_on_a_temporal_address_that_does_not_answer_says_so(
        refused: dict[str, str], tmp_path: Path) -> None:
    """It was ``unexpected RuntimeError: Failed client connect: …``, exit 9: checked beside
    the pool, with the same start lines."""
    address = f"127.0.0.1:{free_port()}"  # nothing listens there
    said = dev_stack(tmp_path, refused["no database"], address)
    assert (said.code, one_line(said, json_lines=True)) == (Exit.UNREACHABLE, [
        f"tollgate: cannot reach Temporal at {address}: start the stack with `tollgate dev` "
        "(or set TEMPORAL_ADDRESS)"])


def caused(cause: BaseException) -> RetryableError:
    """``create_pool``'s failure to connect, raised from ``cause``."""
    said = RetryableError("db_unreachable", "cannot connect to PostgreSQL")
    said.__cause__ = cause
    return said


@pytest.mark.parametrize(("raised", "connecting", "code"), [
    # Not answering: starting up, a connection closed mid-handshake, a socket's error at
    # connect (create_pool's RetryableError keeps it as its cause).
    (asyncpg.CannotConnectNowError("the database system is starting up"), False, 3),
    (asyncpg.ConnectionDoesNotExistError("closed in the middle of operation"), False, 3),
    (TimeoutError(), True, 3),
    (caused(ConnectionResetError()), False, 3),
    (caused(asyncpg.InvalidPasswordError()), False, 1),
    # A URL the client cannot take (`mysql://…`, `sslmode=bogus`; a port that is no number).
    (asyncpg.ClientConfigurationError("invalid DSN"), False, 7),
    (ValueError("invalid literal for int() with base 10: 'abc'"), True, 7),
    # Not PostgreSQL's: left to the caller (a file's OSError at a worker's start, say).
    (OSError(2, "no such file", "tenants.json"), False, None),
    (RetryableError("redis_unreachable", "x"), True, None),
    (ValueError("not a port"), False, None),
])
def test_what_is_not_answering_and_what_is_not_postgresqls(
        raised: BaseException, connecting: bool, code: int | None) -> None:
    failure = postgres_failure(raised, connecting=connecting)
    assert (failure and failure.code) == code
