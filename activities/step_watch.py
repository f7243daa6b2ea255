"""What the activity interceptor tells the step watch (``adapters.ports.watch``) after each try.

Two signs an operator needs and Temporal alone would hide from a PostgreSQL-only screen:

- **A step that keeps failing.** A store step under an unbounded retry policy (``record_step``,
  the decision's recording, ``open_review``) that fails on every try leaves its run retrying
  with the event's state unchanged. From the ``SHOW_AFTER_ATTEMPTS``-th failed try that will be
  retried, one row per (workflow, step) says so; the try that succeeds, or that fails for good
  (the run then moves on and its state shows it), removes the row. A first try that succeeds
  writes nothing, so the common path costs no round trip.
- **A send held by a kill switch.** ``execute_action`` answering ``held`` writes (or refreshes)
  the event's hold row; the event leaving APPROVED ends it.

Best effort: each write is bounded by ``WATCH_TIMEOUT_S`` and a failure is logged, never raised,
so the watch cannot change what a step does (ADR 0038).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Sequence
from typing import Any, Final

import structlog
from temporalio import activity
from temporalio.exceptions import ApplicationError

from adapters.ports.watch import StepWatch
from contracts import ExecuteRequest, ExecuteResult
from contracts.errors import TollgateError

log = structlog.get_logger()

#: From this failed try on (1 is the first), a step that will be tried again is shown. Store
#: steps retry from 200 ms doubling, so the third failure comes about a second after the first.
SHOW_AFTER_ATTEMPTS: Final = 3
#: How long one watch write may take before the step goes on without it.
WATCH_TIMEOUT_S: Final = 2.0
#: What a taxonomy code looks like (``to_application_error`` puts it first in the details).
_CODE = re.compile(r"[a-z0-9_:.-]{1,64}")


class StepWatcher:
    def __init__(self, watch: StepWatch) -> None:
        self.watch = watch

    async def succeeded(self, args: Sequence[Any], result: Any) -> None:
        info = activity.info()
        if isinstance(result, ExecuteResult) and result.status == "held":
            request = next((a for a in args if isinstance(a, ExecuteRequest)), None)
            if request is not None:
                ref = request.action.ref
                await self._best_effort(self.watch.held(
                    workflow_id=ref.workflow_id, tenant_id=ref.tenant_id,
                    adapter=request.action.adapter))
        if info.attempt > SHOW_AFTER_ATTEMPTS:  # an earlier try may have written a row
            await self._best_effort(self.watch.recovered(
                workflow_id=info.workflow_id or "-", step=info.activity_type))

    async def failed(self, tenant_id: str | None, exc: Exception) -> None:
        info = activity.info()
        if _final(exc, info):
            if info.attempt > SHOW_AFTER_ATTEMPTS:
                await self._best_effort(self.watch.recovered(
                    workflow_id=info.workflow_id or "-", step=info.activity_type))
            return
        if info.attempt < SHOW_AFTER_ATTEMPTS:
            return
        error_class, code = _classified(exc)
        await self._best_effort(self.watch.failing(
            workflow_id=info.workflow_id or "-", step=info.activity_type,
            tenant_id=tenant_id, attempt=info.attempt, error_class=error_class,
            error_code=code))

    async def _best_effort(self, write: Awaitable[None]) -> None:
        try:
            # Not wait_for, which on 3.11 can lose the activity's cancel (ADR 0064). The
            # watch's store raises a cancel as CancelledError, which this except lets through.
            async with asyncio.timeout(WATCH_TIMEOUT_S):
                await write
        except Exception as exc:  # the watch must never fail the step
            log.warning("step_watch_unavailable", error=type(exc).__name__)


def _final(exc: Exception, info: activity.Info) -> bool:
    """Whether Temporal will not try this step again after ``exc``."""
    policy = info.retry_policy
    if policy is not None and policy.maximum_attempts and info.attempt >= policy.maximum_attempts:
        return True
    if isinstance(exc, TollgateError):
        return not exc.retryable
    if isinstance(exc, ApplicationError):
        listed = policy.non_retryable_error_types if policy else None
        return exc.non_retryable or (exc.type in (listed or ()))
    return False


def _classified(exc: Exception) -> tuple[str, str]:
    # Class and code only: a message may quote a value, and this row is for any operator.
    if isinstance(exc, TollgateError):
        return exc.error_class.value, exc.code
    if isinstance(exc, ApplicationError):
        code = exc.details[0] if exc.details else None
        return (exc.type or "application",
                code if isinstance(code, str) and _CODE.fullmatch(code) else "-")
    return "unclassified", type(exc).__name__
