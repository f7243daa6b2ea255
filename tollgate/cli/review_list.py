"""`tollgate review list`: a reviewer's queue, the nearest SLA first.

It reads the search attributes (state, tenant, review SLA, and the open review's ticket, so each
row carries the ``--seen`` token a decision may send without a ``show`` first) and each listed
draft's flags from PostgreSQL in one query; only a row PostgreSQL cannot answer for asks the
workflow's ``review_ticket`` query.
"""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import click

from adapters.broker.cancel import within
from contracts.base import ID_PATTERN
from tollgate.cli.common import Command, connect, json_option, pool, token_option
from tollgate.cli.ops_authority import read_scope, reader
from tollgate.cli.output import emit_json, table
from tollgate.cli.params import ID_TEXT
from tollgate.runtime.exits import Exit, Failure

if TYPE_CHECKING:
    from temporalio.client import Client

    from contracts import ReviewTicket
    from tollgate.config.settings import Settings
    from tollgate.ops.review_ticket import ListedTicket

#: ``list`` asks a waiting record for its flags only when PostgreSQL cannot answer: a shorter
#: wait each, "?" when none comes.
LIST_QUERY_TIMEOUT = timedelta(seconds=2)
#: At most this many of those queries at once: a queue of runs from before the ticket (or with
#: no PostgreSQL) waits about one timeout, not one per row, without flooding the server.
LIST_QUERIES_AT_ONCE = 16


async def review_list(client: Client, s: Settings | None = None, *, tenant: str | None,
                      now: datetime | None = None, as_json: bool = False) -> int:
    """Records waiting for review, the nearest SLA first; the flags from PostgreSQL when ``s``
    names one, else (and for a row it has no draft for) from each run's query."""
    from tollgate.ops.review_ticket import REVIEW_QUEUE, listed_ticket
    from workflows.search_attributes import REVIEW_DUE, TENANT

    query = REVIEW_QUEUE
    if tenant is not None:
        if not re.fullmatch(ID_PATTERN, tenant):  # it goes into the query text
            raise Failure(Exit.USAGE, f"not a tenant id: {tenant!r}")
        query += f" AND TollgateTenant = '{tenant}'"
    now = now or datetime.now(UTC)
    listing = [(wf, listed_ticket(wf)) async for wf in client.list_workflows(query)]
    flags = await _listed_flags(client, s, [(wf.id, listed) for wf, listed in listing])
    rows: list[dict[str, Any]] = []
    for (wf, listed), flagged in zip(listing, flags, strict=True):
        attrs = wf.typed_search_attributes
        due = attrs.get(REVIEW_DUE)
        rows.append({"workflow_id": wf.id, "tenant_id": attrs.get(TENANT),
                     "started_at": wf.start_time, "review_due_at": due,
                     "waiting": _span(now - wf.start_time), "sla": sla_left(due, now),
                     "flags": flagged,
                     "draft_version": listed.draft_version if listed else None,
                     "seen": listed.seen if listed else None})
    rows.sort(key=lambda r: (r["review_due_at"] or datetime.max.replace(tzinfo=UTC),
                             r["workflow_id"]))
    if as_json:
        emit_json(rows)
    elif not rows:
        click.echo("nothing waiting for review" + (f" for {tenant}" if tenant else ""))
    else:
        table(["workflow", "tenant", "draft", "waiting", "flags", "SLA"],
              [(r["workflow_id"], r["tenant_id"] or "-",
                f"v{r['draft_version']}" if r["draft_version"] is not None else "-",
                r["waiting"], _flag_mark(r["flags"]), r["sla"]) for r in rows])
    return Exit.OK


def _flag_mark(flags: int | None) -> str:
    # A draft the validator flagged must stand out in the queue; "?" when the query failed.
    if flags is None:
        return "?"
    return f"! {flags}" if flags else "-"


async def _listed_flags(client: Client, s: Settings | None,
                        listed: list[tuple[str, ListedTicket | None]]) -> list[int | None]:
    """Each listed row's flag count (None: no answer). One PostgreSQL read for the rows whose
    ticket names their draft; the others ask their run, a bounded number at a time."""
    keys = [(wid, t.draft_version) if t else None for wid, t in listed]
    wanted = [k for k in keys if k is not None]
    stored = await _stored_flags(s, wanted) if s and s.dsn and wanted else {}
    flags: list[int | None] = [stored.get(k) if k else None for k in keys]
    at_once = asyncio.Semaphore(LIST_QUERIES_AT_ONCE)

    async def ask(row: int) -> None:
        async with at_once:
            ticket = await _ticket_or_none(client, listed[row][0])
        flags[row] = len(ticket.flags) if ticket else None

    await asyncio.gather(*(ask(row) for row, key in enumerate(keys)
                           if key is None or key not in stored))
    return flags


async def _stored_flags(s: Settings,
                        drafts: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
    import asyncpg

    from adapters.postgres.store import PostgresStore

    async def read() -> dict[tuple[str, int], int]:
        async with pool(s) as p:
            return await PostgresStore(p).listed_flags(drafts)

    # The flags are a convenience of the queue: a PostgreSQL that does not answer (in the CLI's
    # bounded wait) leaves them to the queries, as before PostgreSQL held them, rather than
    # failing the whole list. TimeoutError is an OSError.
    try:
        return await within(read(), s.cli.timeout)
    except (Failure, OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
        return {}


async def _ticket_or_none(client: Client, workflow_id: str) -> ReviewTicket | None:
    from temporalio.client import WorkflowQueryFailedError
    from temporalio.service import RPCError

    from contracts import ReviewTicket

    try:
        return await client.get_workflow_handle(workflow_id).query(
            "review_ticket", result_type=ReviewTicket, rpc_timeout=LIST_QUERY_TIMEOUT)
    except (RPCError, WorkflowQueryFailedError):
        return None


def _span(delta: timedelta) -> str:
    minutes = max(int(delta.total_seconds() // 60), 0)
    days, minutes = divmod(minutes, 24 * 60)
    hours, minutes = divmod(minutes, 60)
    return f"{days}d {hours:02d}h" if days else f"{hours}h {minutes:02d}m"


def sla_left(due: datetime | None, now: datetime) -> str:
    if due is None:
        return "-"
    return f"{_span(due - now)} left" if due >= now else f"overdue {_span(now - due)}"


@click.command("list")
@click.option("--tenant", type=ID_TEXT, help="only this tenant's records")
@token_option
@json_option
def list_cmd(tenant: str | None, token: str | None, as_json: bool) -> Command:
    """Records waiting for review, the nearest SLA first, with age, flags and SLA left."""

    async def go(s: Settings) -> int:
        # A token of one tenant lists that tenant (one of every tenant, '*', any); a --tenant
        # naming another is refused, not answered for the token's as "nothing waiting".
        only = read_scope(await reader(s, token), tenant, rows="reviews")
        return await review_list(await connect(s), s, tenant=only, as_json=as_json)

    return go
