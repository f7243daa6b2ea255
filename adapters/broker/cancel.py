"""A consumer's own cancellation, told apart from its handler's failure, and found again when a
library swallowed it.

A broker consumer treats a handler's exception as "not known durable: leave the message and go
on". The Temporal SDK turns a cancelled update call into an error of its own, so a consumer
cancelled while an entry was in flight (a shutdown, a supervisor's cancel) took its own
cancellation for that entry's failure, paused, and read the next entry: the cancel was
swallowed and the task never ended (``raise_if_cancelled``).

A cancel can also vanish without any error. On Python 3.11, ``asyncio.wait_for`` returns the
inner call's result when that call finished just as the caller was cancelled, and the cancel is
gone (CPython gh-86296; 3.12 rebuilt ``wait_for`` on ``asyncio.timeout``). redis-py sends every
command through ``wait_for`` when a socket timeout is set, so a consumer cancelled as its
XREADGROUP was being sent got the read's answer and read on, for ever: the full suite's
360-second hangs in Redis tests' clean-up on a loaded machine (a stand-alone loop of cancelled
reads under CPU load loses a cancel within seconds). The task still counts the cancel
(``Task.cancelling()``), so a loop that runs until cancelled asks at its head
(``raise_if_cancel_pending``).
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


def raise_if_cancel_pending() -> None:
    """Raise ``CancelledError`` when the running task was cancelled and nothing raised it (a
    library swallowed it, as above). For the head of a loop that runs until cancelled."""
    if cancelling():
        raise asyncio.CancelledError()
