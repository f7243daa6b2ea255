"""Exit codes that mean one thing each, and the one-line failure every command ends with.

``docs/cli.md`` documents the table; ``tests/cli`` holds every command to it.
"""

from __future__ import annotations

from enum import IntEnum


class Exit(IntEnum):
    OK = 0
    #: The command ran and the answer is no: a decision refused, an event invalid, drift found.
    REFUSED = 1
    #: Bad arguments or options (Click's usage errors use 2 as well).
    USAGE = 2
    #: Temporal, PostgreSQL or a worker did not answer.
    UNREACHABLE = 3
    #: No such workflow, dead letter or record.
    NOT_FOUND = 4
    #: An input file is missing, unreadable or not UTF-8; a file or folder to write cannot be.
    FILE = 5
    #: `ops status`: something needs a human (a threshold passed); the screen says what.
    ATTENTION = 6
    #: A configuration value (an environment variable) is refused; the line names it.
    CONFIG = 7
    #: A command that decides or changes operations has no verified token: none was given,
    #: or the one given proves nothing here (forged, expired, another issuer's).
    NO_IDENTITY = 8
    #: A bug: the one line names the exception; ``TOLLGATE_DEBUG=1`` shows the traceback.
    INTERNAL = 9


class Failure(Exception):
    """A command's end, said in one line. Raised anywhere below a command; printed by the
    command runner on stderr, never with a traceback."""

    def __init__(self, code: Exit, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def temporal_unreachable(address: str) -> Failure:
    return Failure(Exit.UNREACHABLE,
                   f"cannot reach Temporal at {address}: start the stack with `tollgate dev` "
                   "(or set TEMPORAL_ADDRESS)")


def postgres_unreachable() -> Failure:
    # Never the URL itself: it may carry a password.
    return Failure(Exit.UNREACHABLE,
                   "cannot reach PostgreSQL: start the stack with `tollgate dev` "
                   "(or set DATABASE_URL)")


#: What to check for each refusal PostgreSQL answers a connection or a migration with, looked
#: up along the class's ancestors (an InvalidPasswordError is an InvalidAuthorization...Error).
_CHECK = {
    "InvalidPasswordError": "DATABASE_URL's user and password",
    "InvalidAuthorizationSpecificationError": "DATABASE_URL's user (a role that exists and "
                                              "may log in from here: pg_hba.conf)",
    "InvalidCatalogNameError": "DATABASE_URL's database (no database of that name exists)",
    "InsufficientPrivilegeError": "the rights of DATABASE_URL's user (it connects, reads and "
                                  "writes the tables: docs/deploy.md gives the grants)",
    "TooManyConnectionsError": "PostgreSQL's max_connections and the role's connection limit",
}


def postgres_failure(exc: BaseException, *, connecting: bool = False) -> Failure | None:
    """The one line for a failure met opening a pool or migrating it; None for any other.

    PostgreSQL not answering (down, starting, the connection closed mid-handshake) is exit 3,
    as Temporal not answering; PostgreSQL answering no (a password, a role, a database, a
    right) is exit 1 naming what to check (ADR 0090); an applied migration edited since, 1;
    migrations this role may not apply, 1, naming the command the schema's owner runs (0091).

    Args:
        exc: what was raised.
        connecting: ``exc`` came from opening the connections, so an ``OSError`` (refused, no
            such host, timed out) can only be PostgreSQL's; elsewhere it is left alone.
    """
    import asyncpg

    from adapters.postgres.pool import MigrationChecksumError, MigrationsNotAppliedError
    from contracts.errors import RetryableError

    if isinstance(exc, MigrationChecksumError | MigrationsNotAppliedError):
        # Its own line, naming files and the command to run, never the URL (ADR 0091).
        return Failure(Exit.REFUSED, str(exc))
    if isinstance(exc, RetryableError):
        # create_pool says every connection it could not open so, with PostgreSQL's answer
        # (or the socket's error) as its cause.
        if exc.code != "db_unreachable":
            return None
        said = exc.__cause__
        failure = postgres_failure(said, connecting=True) if said is not None else None
        return failure or postgres_unreachable()
    if isinstance(exc, asyncpg.PostgresConnectionError | asyncpg.CannotConnectNowError
                  | asyncpg.AdminShutdownError | asyncpg.CrashShutdownError):
        # The connection lost or closed mid-handshake (class 08); starting up; going away.
        return postgres_unreachable()
    if isinstance(exc, asyncpg.PostgresError):
        check = next((_CHECK[c.__name__] for c in type(exc).__mro__ if c.__name__ in _CHECK),
                     "DATABASE_URL's user, password, database and rights, and PostgreSQL's log")
        # The class and what to check, never PostgreSQL's own words: they may quote a value.
        return Failure(Exit.REFUSED, f"PostgreSQL refused ({type(exc).__name__}): check {check}")
    if isinstance(exc, asyncpg.ClientConfigurationError) or (
            connecting and isinstance(exc, ValueError)):  # the URL's form: a port not a number
        return Failure(Exit.CONFIG, "DATABASE_URL is refused by the PostgreSQL client "
                       f"({type(exc).__name__}): write it postgresql://USER:PASSWORD@HOST:PORT/DB")
    if isinstance(exc, asyncpg.InterfaceError) or (connecting and isinstance(exc, OSError)):
        return postgres_unreachable()
    return None
