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
