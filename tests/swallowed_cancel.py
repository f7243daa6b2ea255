"""A cancel that Python 3.11's ``asyncio.wait_for`` swallows, made on purpose.

On 3.11 ``wait_for`` returns its call's result when that call finished just as the caller was
cancelled; the caller's task still counts the cancel, and nothing raises it (CPython gh-86296,
adapters/broker/cancel.py). ``answered_as_cancelled`` runs ``call`` through the real
``wait_for`` and cancels the calling task the moment the call has its answer, which is that
race, every time. On 3.12 and later ``wait_for`` raises the cancel instead, and a test that
uses this holds all the same. ``cancel_as_answered`` is that call, for a test of our own code
that once bounded a call with ``wait_for`` (ruff bans it now: ADR 0064).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, NoReturn, TypeVar

T = TypeVar("T")


async def cancel_as_answered(caller: asyncio.Task[Any], answer: T) -> T:
    """Give back ``answer`` and cancel ``caller`` as it is given. Awaited through 3.11's
    ``wait_for`` (a task of its own) the cancel is lost; awaited in ``caller``'s own task, the
    cancel is raised at the caller's next await."""
    asyncio.get_running_loop().call_soon(caller.cancel)
    return answer


async def answered_as_cancelled(call: Callable[[], Awaitable[T]]) -> T:
    caller = asyncio.current_task()
    assert caller is not None

    async def answer_then_cancel() -> T:
        return await cancel_as_answered(caller, await call())

    # The race this module makes on purpose, as a library's wait_for makes it.
    return await asyncio.wait_for(answer_then_cancel(), 10)  # noqa: TID251


async def ends_cancelled(run: Coroutine[Any, Any, Any], what: str,
                         went_on: Callable[[], str]) -> None:
    """Run ``run``, which is cancelled from within (a swallowed cancel, or one in a library's
    guise): it must end cancelled within 3 s. ``went_on`` says what it did meanwhile."""
    task = asyncio.create_task(run)
    done, _ = await asyncio.wait({task}, timeout=3)
    if not done:
        task.cancel()  # a second cancel, so the test itself does not hang
    assert done, f"{what} went on after its cancel ({went_on()})"
    assert task.cancelled(), f"{what} ended, but not cancelled ({went_on()})"


async def cancelled_in_disguise(error: Exception) -> NoReturn:
    """Cancel the running task and raise ``error`` in place of its ``CancelledError``, as a
    library does that reports a cancelled call as an error of its own (the Temporal SDK's
    update call, redis-py's read timeout)."""
    task = asyncio.current_task()
    assert task is not None
    task.cancel()
    try:
        await asyncio.sleep(0)
    except asyncio.CancelledError:
        raise error from None
    raise AssertionError("the cancel was not delivered")
