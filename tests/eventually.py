"""The one way a test waits for something that happens elsewhere (a workflow, a server, visibility).

A test asks for an outcome, not for a number of tries: ``eventually`` polls until the outcome
holds or the deadline passes, and then fails with what it saw last, so a timeout reads as a
finding ("last seen: 'DRAFTED'") rather than as "never reached"."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

T = TypeVar("T")


def _truthy(value: object) -> bool:
    return bool(value)


async def eventually(
    probe: Callable[[], T | Awaitable[T]],
    what: str,
    *,
    until: Callable[[T], bool] = _truthy,
    timeout: float = 30.0,
    interval: float = 0.05,
    ignoring: tuple[type[BaseException], ...] = (),
) -> T:
    """Call ``probe`` (sync or async) until ``until(value)`` holds, and return that value.

    Args:
        probe: what to look at; called once per ``interval``.
        what: the outcome waited for, in words, for the failure message.
        until: when the value is good enough (by default: when it is truthy).
        timeout: seconds before the test fails.
        interval: seconds between two looks.
        ignoring: exceptions that mean "not yet" (a server still starting), not a failure.

    Raises:
        AssertionError: ``until`` never held within ``timeout``; names ``what`` and the last value
            (or exception) seen.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    last: Any = "nothing (the probe never returned)"
    while True:
        try:
            looked = probe()
            value = cast(T, await looked if inspect.isawaitable(looked) else looked)
        except ignoring as exc:
            last = exc
        else:
            if until(value):
                return value
            last = value
        if loop.time() > deadline:
            raise AssertionError(f"not within {timeout:g} s: {what}; last seen: {last!r}")
        await asyncio.sleep(interval)
