"""One place where every activity, local or not, maps its errors and binds its log context.

Activities raise the taxonomy (``contracts.errors``); this interceptor turns a ``TollgateError``
into the ``ApplicationError`` Temporal records (``activities.errors.to_application_error``), so no
call site repeats a try/except for it. For the activity's duration it also binds tenant, event id,
workflow id, activity name and attempt with structlog's contextvars, so every line an activity
or an adapter under it logs carries them without passing them down.

Register it on every worker: ``Worker(..., interceptors=[ActivityContextInterceptor()])``.
Temporal runs a workflow's local activities through the same activity interceptors. An activity
scheduled with a heartbeat timeout has its lease renewed here for as long as it runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import structlog
from temporalio import activity
from temporalio.worker import (
    ActivityInboundInterceptor,
    ExecuteActivityInput,
    Interceptor,
)

from activities.errors import to_application_error
from activities.step_watch import StepWatcher
from adapters.ports.watch import StepWatch
from contracts import EventRef
from contracts.errors import TollgateError


class ActivityContextInterceptor(Interceptor):
    """The worker-level hook; everything happens in the inbound activity interceptor. With a
    ``watch`` (a worker that holds the database), a step that keeps failing and a send held by
    a kill switch are also told to it (``activities.step_watch``)."""

    def __init__(self, watch: StepWatch | None = None) -> None:
        self.watcher = StepWatcher(watch) if watch is not None else None

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _ActivityInbound(next, self.watcher)


class _ActivityInbound(ActivityInboundInterceptor):
    def __init__(self, next: ActivityInboundInterceptor, watcher: StepWatcher | None) -> None:
        super().__init__(next)
        self.watcher = watcher

    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        with activity_context(input.args):
            if self.watcher is None:
                return await self._leased(input)
            try:
                result = await self._leased(input)
            except Exception as exc:
                ref = event_ref(input.args)
                await self.watcher.failed(ref.tenant_id if ref else None, exc)
                raise
            await self.watcher.succeeded(input.args, result)
            return result

    async def _leased(self, input: ExecuteActivityInput) -> Any:
        timeout = activity.info().heartbeat_timeout
        if not timeout or activity.info().is_local:
            return await self.next.execute_activity(input)
        # A heartbeat timeout is a lease: while this process is alive and its loop runs, the
        # lease is renewed; a killed or frozen worker lets it lapse and the server retries
        # the attempt elsewhere after ``timeout`` instead of the whole start-to-close.
        beat = asyncio.create_task(_renew_lease(timeout.total_seconds()))
        try:
            return await self.next.execute_activity(input)
        finally:
            beat.cancel()


async def _renew_lease(timeout_s: float) -> None:
    # The lease runs from the attempt's start, so nothing is due before a quarter of it: an
    # attempt that ends sooner (most sends) costs the server no heartbeat call at all, where a
    # heartbeat at once (the SDK sends a first one without throttling) cost one per send.
    while True:
        await asyncio.sleep(max(timeout_s / 4, 0.2))
        activity.heartbeat()


@contextmanager
def activity_context(args: Sequence[Any]) -> Iterator[None]:
    """Bind the log context and map taxonomy errors around one activity call.

    Must run inside an activity (it reads ``activity.info()``); tests that drive an activity
    with ``ActivityEnvironment``, which takes no interceptors, wrap the call in it.
    """
    info = activity.info()
    context: dict[str, Any] = {
        "activity": info.activity_type,
        "attempt": info.attempt,
        "workflow_id": info.workflow_id,
    }
    ref = event_ref(args)
    if ref is not None:
        context["tenant_id"] = ref.tenant_id
        context["event_id"] = ref.event_id
    with structlog.contextvars.bound_contextvars(**context):
        try:
            yield
        except TollgateError as exc:
            # ``from None``: the taxonomy message is written to be safe; an SDK exception
            # further down the chain (with a URL or a payload in it) may not be.
            raise to_application_error(exc) from None


def event_ref(args: Sequence[Any]) -> EventRef | None:
    """The event an activity works on, read from its single contract argument.

    Requests carry it as ``ref`` or, for actions, ``action.ref``; a sweep has none.
    """
    for arg in args:
        if isinstance(arg, EventRef):
            return arg
        ref = getattr(arg, "ref", None)
        if isinstance(ref, EventRef):
            return ref
        action_ref = getattr(getattr(arg, "action", None), "ref", None)
        if isinstance(action_ref, EventRef):
            return action_ref
    return None
