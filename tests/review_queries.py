"""Counting what a review path asks the workflow: a client interceptor that tallies every query
by name, so a test can show that a decision took no ``review_ticket`` round trip (issue 33);
and the workers and events those tests share (``served``, ``new_event``)."""

from __future__ import annotations

import dataclasses
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import (
    Client,
    Interceptor,
    OutboundInterceptor,
    QueryWorkflowInput,
    WorkflowExecution,
)
from temporalio.common import TypedSearchAttributes
from temporalio.testing import WorkflowEnvironment

from tests.conftest import fresh_key, signed_event, worker_settings
from tollgate.dev.standins import StandIns
from tollgate.runtime.workers import draft_worker, main_worker
from workflows.search_attributes import REVIEW_TICKET


@pytest.fixture
async def served(dev_server: WorkflowEnvironment, database_url: str, standins: StandIns,
                 tmp_path: Path) -> AsyncIterator[tuple[Client, str]]:
    """The dev server's client with a main and a draft worker on a queue of their own."""
    queue = f"tq-{uuid.uuid4().hex[:8]}"
    settings = worker_settings(database_url, standins, tmp_path, queue)
    async with main_worker(dev_server.client, settings), \
            draft_worker(dev_server.client, settings):
        yield dev_server.client, queue


def new_event(standins: StandIns) -> str:
    """A signed care reminder for a new consenting customer."""
    customer = fresh_key("C")
    standins.crm.upsert("acme", customer, first_name="Lan", pet_name="Miu",
                        consent_messaging=True)
    return signed_event(customer)


class QueryCounter(Interceptor):
    """``names[query]`` counts the queries sent through the clients built with it."""

    def __init__(self) -> None:
        self.names: Counter[str] = Counter()

    def intercept_client(self, next: OutboundInterceptor) -> OutboundInterceptor:
        names = self.names

        class Counting(OutboundInterceptor):
            async def query_workflow(self, input: QueryWorkflowInput) -> Any:
                names[input.query] += 1
                return await super().query_workflow(input)

        return Counting(next)


def counting(client: Client) -> tuple[Client, QueryCounter]:
    """The same connection and converter as ``client``, its queries counted."""
    counter = QueryCounter()
    config = client.config()
    config["interceptors"] = [*config["interceptors"], counter]
    return Client(**config), counter


def without_ticket(entry: WorkflowExecution) -> WorkflowExecution:
    """A listing entry as a run from before ``TollgateReviewTicket`` shows it: no ticket."""
    kept = [p for p in entry.typed_search_attributes if p.key.name != REVIEW_TICKET.name]
    return dataclasses.replace(entry, typed_search_attributes=TypedSearchAttributes(kept))


async def listed_entry(client: Client, workflow_id: str) -> WorkflowExecution | None:
    """``workflow_id`` as a reviewer's listing shows it while it waits for review."""
    query = f"WorkflowId = '{workflow_id}' AND TollgateState = 'AWAITING_REVIEW'"
    async for entry in client.list_workflows(query):
        return entry
    return None
