"""A consumer's own cancellation, told apart from its handler's failure.

A broker consumer treats a handler's exception as "not known durable: leave the message and go
on". The Temporal SDK turns a cancelled update call into an error of its own, so a consumer
cancelled while an entry was in flight (a shutdown, a supervisor's cancel) took its own
cancellation for that entry's failure, paused, and read the next entry: the cancel was
swallowed and the task never ended.
"""

from __future__ import annotations

import asyncio


def cancelling() -> bool:
    """Whether the running task has a cancel from outside pending (see ``raise_if_cancelled``)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def raise_if_cancelled(exc: BaseException) -> None:
    """Raise ``CancelledError`` (from ``exc``) when the running task is being cancelled.

    A deadline of ``asyncio.timeout`` around the handler is no cancel of the task once it has
    expired: the timeout takes its own cancel back on exit, so only a cancel from outside is
    still counted here."""
    if cancelling():
        raise asyncio.CancelledError() from exc
