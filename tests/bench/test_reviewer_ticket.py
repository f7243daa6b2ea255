"""The bench's scripted reviewer decides from the listing in one message (issue 33): the ticket
the run shows in ``TollgateReviewTicket`` names the review, so no ``review_ticket`` query
precedes the update; a run that shows none is asked the query first, and the tally says which."""

from __future__ import annotations

import asyncio

from temporalio.client import Client

from contracts import EventState, FinalOutcome
from tests.conftest import start, wait_review
from tests.eventually import eventually
from tests.review_queries import counting, listed_entry, new_event, served, without_ticket
from tollgate.bench.reviewer import Reviewer
from tollgate.bench.tally import Tally
from tollgate.dev.standins import StandIns
from tollgate.ops.review_ticket import listed_ticket

__all__ = ["served"]  # the fixture, from tests/review_queries.py


async def test_listed_run_is_approved_with_no_query(
        served: tuple[Client, str], standins: StandIns) -> None:
    client, queue = served
    handle = await start(client, queue, new_event(standins))
    await wait_review(handle)
    entry = await eventually(lambda: listed_entry(client, handle.id),
                             f"{handle.id} listed with its ticket",
                             until=lambda e: e is not None and listed_ticket(e) is not None)
    assert entry is not None
    counted, queries = counting(client)
    tally, stop = Tally(), asyncio.Event()
    reviewing = asyncio.create_task(Reviewer(counted, "tollgate", tally).run(stop, set(), 0.1))
    try:
        outcome = await client.get_workflow_handle(handle.id, result_type=FinalOutcome).result()
    finally:
        stop.set()
        await reviewing
    assert outcome.state == EventState.SUCCEEDED
    assert tally.reviewer["approved"] == 1 and tally.reviewer["one_message"] == 1
    assert tally.reviewer["queries"] == 0 and queries.names["review_ticket"] == 0


async def test_run_showing_no_ticket_is_asked_the_query_first(
        served: tuple[Client, str], standins: StandIns) -> None:
    client, queue = served
    handle = await start(client, queue, new_event(standins))
    await wait_review(handle)
    entry = await eventually(lambda: listed_entry(client, handle.id), f"{handle.id} listed")
    assert entry is not None
    old = without_ticket(entry)  # as a run from before the attribute is listed
    counted, queries = counting(client)
    tally = Tally()
    await Reviewer(counted, "tollgate", tally)._decide(handle.id, set(), listed_ticket(old))
    outcome = await client.get_workflow_handle(handle.id, result_type=FinalOutcome).result()
    assert outcome.state == EventState.SUCCEEDED
    assert tally.reviewer["approved"] == 1 and tally.reviewer["queries"] == 1
    assert tally.reviewer["one_message"] == 0 and queries.names["review_ticket"] == 1
