"""The bench's scripted reviewer, cancelled as its stop comes, ends then, as it does on a cancel
at any other moment (its decisions in flight are tasks of their own). It waited for the stop
through ``asyncio.wait_for``, which on Python 3.11 gives back the wait's answer and drops a
cancel that lands with it: the reviewer went on to wait out every decision in flight, however
long they took (ADR 0064)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

import pytest

import tollgate.bench.reviewer as reviewer_module
from tests.swallowed_cancel import cancel_as_answered, ends_cancelled
from tollgate.bench.reviewer import Reviewer
from tollgate.bench.tally import Tally
from tollgate.ops.review_ticket import ListedTicket


async def test_a_reviewer_cancelled_as_its_stop_comes_does_not_wait_out_its_decisions(
        monkeypatch: pytest.MonkeyPatch) -> None:
    reviewer_task: asyncio.Task[Any] | None = None
    decided = asyncio.Event()  # never set: a decision that takes for ever
    decisions: list[str] = []

    class Stop(asyncio.Event):
        async def wait(self) -> bool:  # type: ignore[override]
            await super().wait()
            assert reviewer_task is not None
            return await cancel_as_answered(reviewer_task, True)

    stop = Stop()

    class Handle:
        async def execute_update(self, *args: Any, **kwargs: Any) -> None:
            decisions.append("started")
            stop.set()  # the bench ends while this decision is in flight
            await decided.wait()
            decisions.append("decided")

    class Client:
        async def list_workflows(self, query: str, page_size: int) -> AsyncIterator[Any]:
            nonlocal reviewer_task
            reviewer_task = asyncio.current_task()
            yield SimpleNamespace(id="event/acme/evt-1")

        def get_workflow_handle(self, wf_id: str) -> Handle:
            return Handle()

    monkeypatch.setattr(reviewer_module, "listed_ticket",
                        lambda wf: ListedTicket(request_id="r-1", draft_version=1))
    reviewer = Reviewer(Client(), "tollgate", Tally())  # type: ignore[arg-type]
    try:
        await ends_cancelled(reviewer.run(stop, set(), 10), "the reviewer",
                             lambda: f"decisions {decisions}")
    finally:
        decided.set()  # the decision ends, so no task is left behind
        await asyncio.sleep(0.01)
    assert decisions == ["started", "decided"]
