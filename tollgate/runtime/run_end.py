"""Waiting for a run's end without a 20 s stall when its close is not notified (ADR 0083).

``handle.result()`` is a history long poll for the close event (``GetWorkflowExecutionHistory``
with ``wait_new_event`` and the close-event filter). The history service answers it when it is
notified of the run's new events, and otherwise when the poll expires
(``history.longPollExpirationInterval``, 20 s). Server 1.32 hands each notification to a waiting
poll through a channel of one slot and drops it, silently, when the slot is still full
(``service/history/events/notifier.go``): a close notified right behind other events of the
same run, before the poll has read them (a busy host), is never seen, and the wait ends only at
the expiry. The bench met it twice (docs/performance.md: a run of at most 3 s waited 20.2 s).

``run_result`` waits for ``result()`` and asks ``describe()`` once each ``CHECK_EVERY_S`` it has
not answered: a run that is closed, and whose poll still has not answered ``GRACE_S`` later, is
read again (a poll for a closed run answers at once) and reported as a missed close. A run still
open is waited for again. No tight polling: a run that ends in time costs no extra call.

A missed close is logged here, once, as ``missed_close_notification`` (a warning: the workflow
id, how long the wait had lasted, the run's close time; never its result), not by each caller:
every caller then tells the operator alike (``ops dlq replay``, ``ops sweep``, the demo, the
bench), a caller added later cannot forget it, and a run whose re-read raises (it failed, was
terminated) is logged too, though no ``RunEnd`` reaches its caller. The CLI's log lines go to
standard error, so a command's answer on standard output stays as it was.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar

import structlog
from temporalio.client import WorkflowExecutionStatus, WorkflowHandle
from temporalio.service import RPCError

T = TypeVar("T")

log = structlog.get_logger("tollgate.run_end")

#: How long ``result()`` may go unanswered before the run is described (and again after each
#: such span while it runs). Runs that end sooner cost nothing extra; a missed close is learned
#: at most this long (plus ``GRACE_S``) after it happened, not 20 s.
CHECK_EVERY_S = 5.0
#: A run described as closed may have been notified a moment ago: its poll gets this long to
#: answer before the close counts as missed.
GRACE_S = 1.0


@dataclass(frozen=True)
class RunEnd(Generic[T]):
    """A run's result, and when its close went unnoticed by the result's long poll."""

    value: T
    #: The run's close time as ``describe()`` gave it, when the poll missed the close; None
    #: when ``result()`` answered by itself.
    missed_close_at: datetime | None = None


async def run_result(handle: WorkflowHandle[Any, T]) -> RunEnd[T]:
    """``handle.result()``, bounded against a missed close notification, which it logs
    (module docstring).

    Raises what ``result()`` raises (``WorkflowFailureError`` for a run that failed, was
    terminated, cancelled or timed out). A ``describe()`` that fails is ignored: the poll
    itself still answers, at the latest when it expires."""
    began = time.monotonic()
    waiting = asyncio.ensure_future(handle.result())
    try:
        while True:
            if await _answered(waiting, CHECK_EVERY_S):
                return RunEnd(waiting.result())
            closed_at = await _closed_at(handle)
            if closed_at is None:
                continue
            if await _answered(waiting, GRACE_S):
                return RunEnd(waiting.result())
            waiting.cancel()
            log.warning("missed_close_notification", workflow_id=handle.id,
                        waited_s=round(time.monotonic() - began, 1),
                        closed_at=closed_at.isoformat())
            return RunEnd(await handle.result(), missed_close_at=closed_at)
    finally:
        if not waiting.done():
            waiting.cancel()
            with contextlib.suppress(BaseException):
                await waiting


async def _answered(waiting: asyncio.Future[Any], seconds: float) -> bool:
    """Whether ``waiting`` ended within ``seconds`` (it is never cancelled here)."""
    done, _ = await asyncio.wait({waiting}, timeout=seconds)
    return bool(done)


async def _closed_at(handle: WorkflowHandle[Any, Any]) -> datetime | None:
    """The close time of the run ``handle`` names, or None while it runs (or continued as new:
    ``result()`` follows it to the next run) or when Temporal did not answer."""
    try:
        found = await handle.describe()
    except RPCError:
        return None
    if found.status in (None, WorkflowExecutionStatus.RUNNING,
                        WorkflowExecutionStatus.CONTINUED_AS_NEW):
        return None
    return found.close_time
