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
(``raise_if_cancel_pending``). Our own code bounds a call with ``within``, never ``wait_for``
(ruff bans it: ADR 0064).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


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


async def within(call: Awaitable[T], seconds: float) -> T:
    """``asyncio.wait_for(call, seconds)`` without 3.11's lost cancel (ADR 0064).

    The call runs in a task of its own, as with ``wait_for`` (what it does to its task's cancel
    count stays there: 3.11's ``TaskGroup`` leaves one behind when a child fails), bounded by
    ``asyncio.timeout`` in the caller. A cancel of the caller that lands as the call answers is
    raised, not dropped. The rest is as ``wait_for`` answered, so no caller's ``except``
    changes: ``TimeoutError`` when the call ends on the deadline's cancel, the call's own error
    when it reports that cancel as one (the Temporal SDK's update call), and ``CancelledError``
    for a cancel from outside, even when the call reported it as an error of its own or
    swallowed it (a caller's ``except Exception`` must not take it for the call's failure).
    """
    caller = asyncio.current_task()
    assert caller is not None
    before = caller.cancelling()
    inner = asyncio.ensure_future(call)
    try:
        # Awaiting the task itself: a cancel of the caller cancels it, and the caller goes on
        # only once it has ended (bpo-32751's rule). The deadline's cancel is taken back on exit.
        async with asyncio.timeout(seconds):
            answer = await inner
    except Exception as exc:
        if caller.cancelling() > before:
            raise asyncio.CancelledError() from exc
        raise
    if caller.cancelling() > before:
        raise asyncio.CancelledError()
    return answer
