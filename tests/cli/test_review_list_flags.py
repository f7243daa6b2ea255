"""`tollgate review list` reads every listed draft's flags from PostgreSQL in one query, keyed by
the ticket's (workflow id, draft version): a queue of waiting runs costs no ``review_ticket``
query each, and prints even when no worker answers. Only a row PostgreSQL cannot answer for (no
ticket, a draft it does not hold, no PostgreSQL configured) asks its run, a few at a time."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from temporalio.client import (
    Client,
    Interceptor,
    OutboundInterceptor,
    QueryWorkflowInput,
    WorkflowExecution,
)
from temporalio.testing import WorkflowEnvironment

from adapters.broker.cancel import within
from contracts import ReviewDecision
from tests.conftest import Handle, start, wait_review, worker_settings
from tests.eventually import eventually
from tests.review_queries import listed_entry, new_event, without_ticket
from tollgate.cli import review_list as listing
from tollgate.cli.review_list import review_list
from tollgate.config.settings import Settings
from tollgate.dev.standins import StandIns
from tollgate.ops import review_ticket
from tollgate.ops.review_ticket import ListedTicket, listed_ticket
from tollgate.runtime.workers import draft_worker, main_worker

#: Two flags written over a draft's own in PostgreSQL: a count no run's query gives here.
TWO_FLAGS = json.dumps([{"rule": "test"}, {"rule": "test"}])


class Queries(Interceptor):
    """The ``review_ticket`` queries sent, by workflow id, and the most in flight at once; each
    waits ``delay`` first, so that queries sent together are seen together."""

    def __init__(self, delay: float = 0.0) -> None:
        self.asked: Counter[str] = Counter()
        self.in_flight = self.most = 0
        self.delay = delay

    def intercept_client(self, next: OutboundInterceptor) -> OutboundInterceptor:
        seen = self

        class Counting(OutboundInterceptor):
            async def query_workflow(self, input: QueryWorkflowInput) -> Any:
                if input.query != "review_ticket":
                    return await super().query_workflow(input)
                seen.asked[input.id] += 1
                seen.in_flight += 1
                seen.most = max(seen.most, seen.in_flight)
                try:
                    await asyncio.sleep(seen.delay)
                    return await super().query_workflow(input)
                finally:
                    seen.in_flight -= 1

        return Counting(next)


def counted(client: Client, queries: Queries) -> Client:
    config = client.config()
    config["interceptors"] = [*config["interceptors"], queries]
    return Client(**config)


@asynccontextmanager
async def workers(client: Client, settings: Settings) -> AsyncIterator[None]:
    async with main_worker(client, settings), draft_worker(client, settings):
        yield


async def waiting(client: Client, queue: str, standins: StandIns,
                  n: int) -> list[tuple[Handle, dict[str, Any]]]:
    """``n`` runs waiting for review, each listed with its ticket."""
    handles = [await start(client, queue, new_event(standins)) for _ in range(n)]
    runs = [(h, await wait_review(h)) for h in handles]
    for h, _ in runs:
        await eventually(lambda h=h: listed_entry(client, h.id), f"{h.id} listed with a ticket",
                         until=lambda e: e is not None and listed_ticket(e) is not None)
    return runs


async def set_flags(database_url: str, workflow_id: str, version: int, flags: str) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        done = await conn.execute("UPDATE drafts SET flags = $3::jsonb"
                                  " WHERE workflow_id = $1 AND version = $2",
                                  workflow_id, version, flags)
    finally:
        await conn.close()
    assert done == "UPDATE 1", f"{workflow_id} v{version} not in drafts"


async def listed(client: Client, s: Settings | None, capsys: pytest.CaptureFixture[str],
                 ids: list[str]) -> dict[str, dict[str, Any]]:
    """``review list --json``'s rows for ``ids``."""
    capsys.readouterr()
    assert await review_list(client, s, tenant="acme", as_json=True) == 0
    out = capsys.readouterr().out  # a running worker's log lines share stdout here
    rows, _ = json.JSONDecoder().raw_decode(out[out.index("[\n"):] if "[\n" in out else out)
    return {r["workflow_id"]: r for r in rows if r["workflow_id"] in ids}


async def close(client: Client, runs: list[tuple[Handle, dict[str, Any]]]) -> None:
    """Reject each run, so that no later listing of this module shows it waiting."""
    for handle, shown in runs:
        await client.get_workflow_handle(handle.id).execute_update("review", ReviewDecision(
            request_id=shown["request_id"], decision="reject", reviewer="an.tran",
            role="care_lead", reason="test done", draft_version=shown["draft_version"]))
        await handle.result()


async def test_flags_come_from_postgresql_with_no_query_even_with_no_worker(
        dev_server: WorkflowEnvironment, database_url: str, standins: StandIns, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    client, queue = dev_server.client, f"tq-{uuid.uuid4().hex[:8]}"
    settings = worker_settings(database_url, standins, tmp_path, queue)
    async with workers(client, settings):
        runs = await waiting(client, queue, standins, 3)
    (first, v1), *rest = runs
    await set_flags(database_url, first.id, v1["draft_version"], TWO_FLAGS)
    queries = Queries()
    ids = [h.id for h, _ in runs]
    # No worker now: the old list asked each run and printed "?" after 2 s per row.
    rows = await within(listed(counted(client, queries), settings, capsys, ids), 10)
    assert {i: rows[i]["flags"] for i in ids} == {
        first.id: 2, **{h.id: len(shown["flags"]) for h, shown in rest}}
    assert all(rows[h.id]["seen"] == f"v{s['draft_version']}:{s['request_id']}"
               for h, s in runs)
    assert await review_list(counted(client, queries), settings, tenant="acme") == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith(first.id))
    assert " ! 2 " in line and "postgresql://" not in out
    assert not any(queries.asked[i] for i in ids), queries.asked
    async with workers(client, settings):
        await close(client, runs)


async def test_rows_postgresql_cannot_answer_ask_their_run_a_few_at_a_time(
        dev_server: WorkflowEnvironment, database_url: str, standins: StandIns, tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    client, queue = dev_server.client, f"tq-{uuid.uuid4().hex[:8]}"
    settings = worker_settings(database_url, standins, tmp_path, queue)
    async with workers(client, settings):
        runs = await waiting(client, queue, standins, 3)
        (stored, _), (old, v2), (unwritten, v3) = runs
        # PostgreSQL says two flags for each: only the row read from it shows two.
        for h, shown in runs:
            await set_flags(database_url, h.id, shown["draft_version"], TWO_FLAGS)

        def ticket(entry: WorkflowExecution) -> ListedTicket | None:
            if entry.id == old.id:  # a run from before the ticket attribute
                return listed_ticket(without_ticket(entry))
            found = listed_ticket(entry)
            if entry.id == unwritten.id and found:  # a draft PostgreSQL does not hold
                return ListedTicket(found.request_id, found.draft_version + 100)
            return found

        monkeypatch.setattr(review_ticket, "listed_ticket", ticket)
        monkeypatch.setattr(listing, "LIST_QUERIES_AT_ONCE", 2)
        ids = [h.id for h, _ in runs]
        queries = Queries(delay=0.3)
        rows = await listed(counted(client, queries), settings, capsys, ids)
        assert {i: rows[i]["flags"] for i in ids} == {
            stored.id: 2, old.id: len(v2["flags"]), unwritten.id: len(v3["flags"])}
        assert rows[old.id]["draft_version"] is None and rows[old.id]["seen"] is None
        assert {i: queries.asked[i] for i in ids} == {stored.id: 0, old.id: 1, unwritten.id: 1}
        assert queries.most == 2  # the two asked together

        # No PostgreSQL configured: every row asks, at most two at once here.
        queries = Queries(delay=0.3)
        bare = Settings.from_env({"TOLLGATE_STATE_DIR": str(tmp_path / "no-stack")})
        assert bare.dsn is None
        rows = await listed(counted(client, queries), bare, capsys, ids)
        assert {i: rows[i]["flags"] for i in ids} == {
            h.id: len(shown["flags"]) for h, shown in runs}
        assert {i: queries.asked[i] for i in ids} == dict.fromkeys(ids, 1)
        assert queries.most == 2

        # A PostgreSQL that does not answer: the queue still prints, its flags asked of the runs.
        queries = Queries()
        gone = Settings.from_env({"DATABASE_URL": "postgresql://tollgate:pw@127.0.0.1:9/none",
                                  "TOLLGATE_STATE_DIR": str(tmp_path / "no-stack")})
        rows = await listed(counted(client, queries), gone, capsys, ids)
        assert {i: rows[i]["flags"] for i in ids} == {
            h.id: len(shown["flags"]) for h, shown in runs}
        assert {i: queries.asked[i] for i in ids} == dict.fromkeys(ids, 1)
        monkeypatch.undo()
        await close(client, runs)
