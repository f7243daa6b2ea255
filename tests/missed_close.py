"""A close that the result's long poll is not told of, made on purpose (ADR 0083).

Server 1.32 can drop the notification of a run's close to a waiting ``result()`` long poll
(``tollgate/runtime/run_end.py``); the poll then answers only when it expires, 20 s later. That
drop cannot be caused from outside the server, so this stands in for it at the client: a client
interceptor holds the first close-event long poll of each run, unanswered until it is cancelled,
while everything else (the server, the run, ``describe()``, a second poll) is real. It stands in
for the missed notification, not for Temporal: a poll held here never expires on its own, which
is the worst case of the real one.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any, cast

import pytest
from temporalio.client import (
    Client,
    DescribeWorkflowInput,
    FetchWorkflowHistoryEventsInput,
    Interceptor,
    OutboundInterceptor,
    WorkflowExecutionDescription,
    WorkflowHistoryEventAsyncIterator,
    WorkflowHistoryEventFilterType,
)

import tollgate.runtime.client
import tollgate.runtime.run_end


class _Held:
    """A history iterator that yields nothing until cancelled: the poll whose close was lost."""

    def __init__(self, held: asyncio.Event) -> None:
        self._held = held

    def __aiter__(self) -> _Held:
        return self

    async def __anext__(self) -> Any:
        self._held.set()
        await asyncio.Event().wait()  # never set: only a cancel ends it
        raise StopAsyncIteration


class MissFirstClose(Interceptor):
    """Holds each workflow id's first close-event long poll; counts the ``describe()`` calls."""

    def __init__(self) -> None:
        self.held: dict[str, asyncio.Event] = {}
        self.describes: Counter[str] = Counter()

    def intercept_client(self, next: OutboundInterceptor) -> OutboundInterceptor:
        return _Outbound(next, self)


class _Outbound(OutboundInterceptor):
    def __init__(self, next: OutboundInterceptor, root: MissFirstClose) -> None:
        super().__init__(next)
        self.root = root

    def fetch_workflow_history_events(
            self, input: FetchWorkflowHistoryEventsInput) -> WorkflowHistoryEventAsyncIterator:
        closing = (input.wait_new_event
                   and input.event_filter_type == WorkflowHistoryEventFilterType.CLOSE_EVENT)
        if closing and input.id not in self.root.held:
            self.root.held[input.id] = asyncio.Event()
            return cast(WorkflowHistoryEventAsyncIterator, _Held(self.root.held[input.id]))
        return super().fetch_workflow_history_events(input)

    async def describe_workflow(self, input: DescribeWorkflowInput
                                ) -> WorkflowExecutionDescription:
        self.root.describes[input.id] += 1
        return await super().describe_workflow(input)


def missing_closes(client: Client, missing: MissFirstClose) -> Client:
    """``client`` (its connection, namespace and codec) with ``missing`` in front of it."""
    config = client.config()
    config["interceptors"] = [*config["interceptors"], missing]
    return Client(**config)


def unheard_in_commands(monkeypatch: pytest.MonkeyPatch) -> MissFirstClose:
    """Every client a command builds (``tollgate.runtime.client.build_client``) holds each
    run's first close poll, and ``run_result`` describes a run after 0.5 s instead of 5: what
    the ``ops`` commands' missed-close tests run under. The returned interceptor says which
    polls it held."""
    built = tollgate.runtime.client.build_client
    missing = MissFirstClose()

    async def unheard(*args: Any, **kwargs: Any) -> Client:
        return missing_closes(await built(*args, **kwargs), missing)

    monkeypatch.setattr(tollgate.runtime.client, "build_client", unheard)
    monkeypatch.setattr(tollgate.runtime.run_end, "CHECK_EVERY_S", 0.5)
    return missing
