"""What every command shares: running a coroutine to one exit code, and reaching the servers.
What a command prints is in ``output.py``; its checked option types in ``params.py``."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import click

from adapters.broker.cancel import within
from tollgate.cli.output import closed_output
from tollgate.runtime.exits import Exit, Failure, postgres_failure, temporal_unreachable

if TYPE_CHECKING:
    import asyncpg
    from temporalio.client import Client

    from tollgate.config.settings import Settings
    from tollgate.runtime.identity import Identity

#: What a command's callback returns: the work, run by the root group's ``run``, so that every
#: command fails the same way and tests can await the work inside their own event loop.
#: ``Settings`` by name: the settings tree is imported when a command runs, not to parse its
#: command line (tollgate/cli/lazy.py).
Command = Callable[["Settings"], Awaitable[int]]

json_option = click.option("--json", "as_json", is_flag=True,
                           help="print the records as JSON instead of a table")

token_option = click.option(
    "--token", envvar="TOLLGATE_TOKEN", show_envvar=True,
    help="access token (`tollgate dev token`, or your identity provider's: docs/security.md); "
         "who you are, your roles and tenant come from it")


async def identity_of(token: str | None, s: Settings) -> Identity:
    """The verified identity a token carries, or one line (exit 8) saying why there is none."""
    from tollgate.runtime.identity import IdentityError, verifier_from_settings

    if not token or not token.strip():
        raise Failure(Exit.NO_IDENTITY, "no token: give --token (or TOLLGATE_TOKEN), from "
                      "`tollgate dev token` or your identity provider (docs/security.md)")
    try:
        return await verifier_from_settings(s).verify(token.strip())
    except IdentityError as exc:
        raise Failure(Exit.NO_IDENTITY, f"token refused: {exc.code}: {exc.message}") from None


def settings() -> Settings:
    from tollgate.config.settings import Settings

    return Settings.from_env()


async def connect(s: Settings) -> Client:
    """A Temporal client, or one line naming the address that did not answer."""
    from datetime import timedelta

    from tollgate.cli.deadline import with_deadline
    from tollgate.codec.keyring import load_key_ring
    from tollgate.runtime.client import build_client

    # Bounded (TOLLGATE_CLI_TIMEOUT): a paused server accepts the connection and never answers,
    # and the SDK would keep asking for half a minute, then every call would wait for ever.
    wait = s.cli.timeout
    # Read before the bounded wait, so that a missing ring is its own one line (exit 5) raised
    # here, never an exception left behind in the wait's task.
    ring = load_key_ring(s.codec)
    try:
        client = await within(
            build_client(s.temporal_address, s.namespace, keys=ring, env=s.env), wait)
    except (RuntimeError, TimeoutError) as exc:  # the SDK's "Failed client connect: ..."
        raise temporal_unreachable(s.temporal_address) from exc
    return with_deadline(client, timedelta(seconds=wait))


@asynccontextmanager
async def pool(s: Settings, *, migrate: bool = False) -> AsyncIterator[asyncpg.Pool]:
    """A small pool for one command; ``migrate`` applies the schema first (operators' stores)."""
    import asyncpg

    if not s.dsn:
        raise Failure(Exit.UNREACHABLE, "no PostgreSQL: DATABASE_URL is not set and no "
                      "`tollgate dev` is running (start it, or set DATABASE_URL)")
    try:
        if migrate:
            from adapters.postgres.pool import create_pool

            made = await create_pool(s.dsn, max_size=2)
        else:
            made = await asyncpg.create_pool(s.dsn, min_size=1, max_size=2)
    except Exception as exc:
        # Not answering (exit 3), or answering no: a password, a database, a right (exit 1).
        if (failure := postgres_failure(exc, connecting=True)) is None:
            raise
        raise failure from exc
    try:
        yield made
    except asyncpg.UndefinedTableError:
        # A database nobody migrated (or DATABASE_URL naming another one): not a bug. Told
        # apart by schema_migrations, which every migrated database has, asked only now.
        if await made.fetchval("SELECT to_regclass('schema_migrations') IS NULL"):
            raise Failure(Exit.REFUSED, "no Tollgate schema in this database: run `tollgate "
                          "ops migrate` (or check DATABASE_URL's database)") from None
        raise
    finally:
        await made.close()


def classify(exc: BaseException, s: Settings | None) -> Failure:
    """The one-line failure for an exception that escaped a command."""
    address = s.temporal_address if s else "the configured address"
    if isinstance(exc, Failure):
        return exc
    # Only an SDK that was imported can have raised its error: a command that stopped before
    # reaching Temporal (PostgreSQL down, a bad file) does not import the SDK to say so.
    if "temporalio.service" in sys.modules:
        from temporalio.service import RPCError, RPCStatusCode

        if isinstance(exc, RPCError):
            if exc.status == RPCStatusCode.NOT_FOUND:
                return Failure(Exit.NOT_FOUND, f"not found: {exc.message}")
            if exc.status == RPCStatusCode.UNAVAILABLE:
                return temporal_unreachable(address)
            if exc.status == RPCStatusCode.DEADLINE_EXCEEDED:
                return Failure(Exit.UNREACHABLE, f"Temporal at {address}, or its worker, did "
                               "not answer in time (TOLLGATE_CLI_TIMEOUT): is `tollgate dev` "
                               "(or `python worker.py`) running?")
            return Failure(Exit.REFUSED, f"Temporal refused: {exc.message}")
    from tollgate.codec.keyring import KeyRingError

    if isinstance(exc, KeyRingError):
        # No payload key ring (or a broken one): a file the command needs and cannot read.
        return Failure(Exit.FILE, str(exc.code))
    if isinstance(exc, OSError) and not isinstance(exc, ConnectionError) and exc.filename:
        # A file or folder a command reads or writes (--state-dir, --out, --json): its path
        # and the system's reason, which name no secret and no customer.
        return Failure(Exit.FILE, f"{exc.filename}: {(exc.strerror or str(exc)).lower()}")
    if "asyncpg" in sys.modules:
        import asyncpg

        # A right the user lacks, met after the pool opened (a table it may not read): the
        # database's grants, never a bug; said as the pool's own refusal is (ADR 0090).
        if isinstance(exc, asyncpg.InsufficientPrivilegeError) and (
                failure := postgres_failure(exc)):
            return failure
    from tollgate.config.base import ConfigError

    if isinstance(exc, ConfigError):
        return Failure(Exit.CONFIG, exc.message)
    if isinstance(exc, SystemExit) and isinstance(exc.code, str):
        # A start-up or configuration problem already said in one line (a port in use...), or
        # a start that Temporal or PostgreSQL refused, with its own code (runtime.entry).
        said = getattr(exc, "failure", None)
        return said if isinstance(said, Failure) else Failure(Exit.REFUSED, exc.code)
    return Failure(Exit.INTERNAL, f"unexpected {type(exc).__name__}: {exc} "
                   "(TOLLGATE_DEBUG=1 shows the traceback)")


def run(work: Command) -> int:
    """Run one command's work; any failure becomes one line on stderr and its exit code."""
    s: Settings | None = None
    try:
        s = settings()
        return asyncio.run(_call(work, s))
    except BrokenPipeError:
        # The reader went away (`| head -1`): a normal end, not a failure to report. No
        # command writes to a pipe of its own, so a broken pipe here is the standard output.
        return closed_output()
    except KeyboardInterrupt:
        if getattr(work, "stops_on_interrupt", False):
            click.echo("stopped")
            return int(Exit.OK)
        click.echo("tollgate: interrupted", err=True)
        return 130
    except BaseException as exc:
        if isinstance(exc, SystemExit) and not isinstance(exc.code, str):
            raise
        if s is not None and s.cli.debug and not isinstance(exc, Failure):
            raise
        failure = classify(exc, s)
        click.echo(f"tollgate: {failure.message}", err=True)
        return int(failure.code)


async def _call(work: Command, s: Settings) -> int:
    return int(await work(s))


async def run_in_loop(work: Command, s: Settings) -> int:
    """``run`` for a caller that already has an event loop (tests): one line, one code."""
    try:
        return int(await work(s))
    except Failure as failure:
        click.echo(f"tollgate: {failure.message}", err=True)
        return int(failure.code)
