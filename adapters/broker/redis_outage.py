"""The stream consumer while what it hands entries to (Temporal) is out: docs/redis-intake.md.

An outage is nobody's entry's fault (issue 25; ADR 0030 for the HTTP outbox): once a handler
says ``Unreachable`` (or times out while the probe says nobody could have answered), the
consumer stops reading and reclaiming, and waits with a capped exponential backoff, asking the
probe, until the downstream takes entries again. It says so once when the outage starts and
once when it ends, never per probe, and never with an entry's text.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable

from adapters.broker.cancel import raise_if_cancel_pending, raise_if_cancelled

#: Can the handler's downstream take entries now? (For Temporal: the server answers and a
#: worker polls the task queue.) Asked after a handler timed out, and during an outage.
Probe = Callable[[], Awaitable[bool]]
Reporter = Callable[..., None]


class Unreachable(Exception):
    """The handler could not reach what it hands entries to: an outage, not the entry's fault.
    ``code`` says how it showed (an RPC status, ``no_answer_in_time``); never an entry's text."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


class Outage:
    """One consumer's view: since when the downstream has been unreachable (None: it is not),
    and the next wait."""

    def __init__(self, first_pause_s: float, max_pause_s: float, report: Reporter) -> None:
        self.first_pause_s, self.max_pause_s = first_pause_s, max_pause_s
        self._report = report
        self.since: float | None = None
        self._pause = first_pause_s

    async def wait_out(self, code: str, probe: Probe | None,
                       stop: asyncio.Event | None) -> None:
        """Wait until ``probe`` says yes (without one: one backoff step; the next entry is
        the probe, and the wait doubles until one is answered)."""
        if self.since is None:
            self.since = time.monotonic()
            self._pause = self.first_pause_s
            self._report("temporal_unreachable", error=code)
        while stop is None or not stop.is_set():
            raise_if_cancel_pending()
            await _sleep(self._pause, stop)
            self._pause = min(self._pause * 2, self.max_pause_s)
            if probe is None:
                return
            if await answers(probe):
                self.over()
                return

    def over(self) -> None:
        """An entry was answered, or the probe said yes: the outage (if any) has ended."""
        if self.since is not None:
            seconds = time.monotonic() - self.since
            self.since = None
            self._report("temporal_reachable", after_s=f"{seconds:.0f}")


async def answers(probe: Probe) -> bool:
    try:
        return await probe()
    except Exception as exc:  # a probe that fails says "no"
        # ... unless the failure was this consumer's cancel in another guise: waiting out
        # the outage would then never end (adapters/broker/cancel.py).
        raise_if_cancelled(exc)
        return False


async def _sleep(seconds: float, stop: asyncio.Event | None) -> None:
    """Sleep, cut short by ``stop`` (SIGTERM during an outage must not wait out the backoff)."""
    if stop is None:
        await asyncio.sleep(seconds)
        return
    with contextlib.suppress(TimeoutError):  # not wait_for: it can lose a cancel (cancel.py)
        async with asyncio.timeout(seconds):
            await stop.wait()
