"""One run's open review from its own search attributes (``tollgate.ops.review_ticket``, issue
33): ``describe()`` carries the ticket, so whoever decides from it sends the update alone; the
ticket is a hint, so one gone stale (a request-info moved the review on) is refused by the
workflow's validator as any stale decision is; a run that shows no ticket is asked the query."""

from __future__ import annotations

from typing import Any

import pytest
from temporalio.client import Client, WorkflowHandle, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError

from contracts import EventState, FinalOutcome, ReviewAck, ReviewDecision
from tests.conftest import start, wait_review
from tests.eventually import eventually
from tests.review_queries import counting, new_event, served, without_ticket
from tollgate.dev.standins import StandIns
from tollgate.ops.review_ticket import ListedTicket, RunReview, listed_ticket, open_review

__all__ = ["served"]  # the fixture, from tests/review_queries.py


def decision(ticket: ListedTicket, kind: str, reason: str) -> ReviewDecision:
    return ReviewDecision(request_id=ticket.request_id, decision=kind, reviewer="an.tran",
                          role="care_lead", reason=reason, draft_version=ticket.draft_version)


async def reviewed(handle: WorkflowHandle[Any, Any], version: int) -> ListedTicket:
    found: RunReview = await eventually(
        lambda: open_review(handle), f"{handle.id} showing the ticket of draft v{version}",
        until=lambda r: r.ticket is not None and r.ticket.draft_version == version)
    assert found.ticket is not None and not found.asked
    return found.ticket


async def test_decision_from_the_runs_ticket_needs_no_query(
        served: tuple[Client, str], standins: StandIns) -> None:
    client, queue = served
    counted, queries = counting(client)
    handle = counted.get_workflow_handle(
        (await start(client, queue, new_event(standins))).id, result_type=FinalOutcome)
    shown = await wait_review(handle)  # what the workflow itself says is open
    queries.names.clear()
    ticket = await reviewed(handle, shown["draft_version"])
    assert ticket.request_id == shown["request_id"]
    ack = await handle.execute_update("review", decision(ticket, "approve", "checked"),
                                      result_type=ReviewAck)
    assert ack.accepted
    assert (await handle.result()).state == EventState.SUCCEEDED
    assert queries.names["review_ticket"] == 0
    assert await open_review(handle) == RunReview(running=False, ticket=None)


async def test_stale_ticket_is_refused_by_the_validator(
        served: tuple[Client, str], standins: StandIns) -> None:
    client, queue = served
    handle = await start(client, queue, new_event(standins))
    first = await reviewed(handle, 1)
    asked = await handle.execute_update(
        "review", decision(first, "request_info", "Is the due date the 12th?"),
        result_type=ReviewAck)
    assert asked.accepted
    second = await reviewed(handle, 2)
    assert second != first
    with pytest.raises(WorkflowUpdateFailedError) as refused:
        await handle.execute_update("review", decision(first, "approve", "old page"))
    assert isinstance(refused.value.cause, ApplicationError)
    assert refused.value.cause.type in ("wrong_request", "stale_draft_version")
    assert (await handle.query("state")) == EventState.AWAITING_REVIEW
    ack = await handle.execute_update("review", decision(second, "approve", "v2 is right"),
                                      result_type=ReviewAck)
    assert ack.accepted and (await handle.result()).state == EventState.SUCCEEDED


class _ShowsNoTicket:
    """A run as one from before ``TollgateReviewTicket`` describes itself."""

    def __init__(self, handle: WorkflowHandle[Any, Any]) -> None:
        self.handle, self.query = handle, handle.query

    async def describe(self) -> Any:
        return without_ticket(await self.handle.describe())


async def test_run_showing_no_ticket_is_asked_the_query(
        served: tuple[Client, str], standins: StandIns) -> None:
    client, queue = served
    counted, queries = counting(client)
    handle = counted.get_workflow_handle((await start(client, queue, new_event(standins))).id)
    shown = await wait_review(handle)
    queries.names.clear()
    found = await open_review(_ShowsNoTicket(handle))  # type: ignore[arg-type]
    assert found.asked and queries.names["review_ticket"] == 1
    assert found.ticket == ListedTicket(shown["request_id"], shown["draft_version"])
    assert listed_ticket(without_ticket(await handle.describe())) is None
    ack = await handle.execute_update("review", decision(found.ticket, "reject", "not now"),
                                      result_type=ReviewAck)
    assert ack.accepted
