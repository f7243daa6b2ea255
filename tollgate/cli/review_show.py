"""`tollgate review list|show`: a reviewer's queue and one record, without Temporal internals.

``list`` reads the search attributes (state, tenant, review SLA, and the open review's ticket, so
each row carries the ``--seen`` token a decision may send without a ``show`` first) and each
listed draft's flags from PostgreSQL in one query; only a row PostgreSQL cannot answer for asks
the workflow's ``review_ticket`` query. ``show`` reads that query and PostgreSQL (the newest
draft, every decision) and prints the ``--seen`` token a decision must carry: the draft version
and review request it answers.
"""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import click

from contracts.base import ID_PATTERN
from tollgate.cli.common import emit_json, pool, table
from tollgate.cli.review_evidence import print_diff, print_evidence, print_flags, print_route
from tollgate.cli.review_triage import print_message
from tollgate.config.settings import Settings
from tollgate.runtime.exits import Exit, Failure

if TYPE_CHECKING:
    from temporalio.client import Client

    from adapters.postgres.store import ReviewRecord
    from contracts import ReviewTicket
    from tollgate.ops.review_ticket import ListedTicket

#: A query waits for a worker; with none running, say so instead of hanging.
QUERY_TIMEOUT = timedelta(seconds=10)
#: ``list`` asks a waiting record for its flags only when PostgreSQL cannot answer: a shorter
#: wait each, "?" when none comes.
LIST_QUERY_TIMEOUT = timedelta(seconds=2)
#: At most this many of those queries at once: a queue of runs from before the ticket (or with
#: no PostgreSQL) waits about one timeout, not one per row, without flooding the server.
LIST_QUERIES_AT_ONCE = 16


def seen_token(draft_version: int, request_id: str) -> str:
    """What ``review show`` prints and a decision sends back (``--seen``)."""
    return f"v{draft_version}:{request_id}"


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
                     "waiting": _span(now - wf.start_time), "sla": _sla_left(due, now),
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
        return await asyncio.wait_for(read(), s.cli.timeout)
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


def _sla_left(due: datetime | None, now: datetime) -> str:
    if due is None:
        return "-"
    return f"{_span(due - now)} left" if due >= now else f"overdue {_span(now - due)}"


async def review_show(client: Client, s: Settings, workflow_id: str, *,
                      now: datetime | None = None, as_json: bool = False) -> int:
    """One record: state, policy, risk, the open request and its draft, every decision."""
    from tollgate.ops.review_ticket import ended_state, how_it_ended, open_end

    now = now or datetime.now(UTC)
    run = await how_it_ended(client.get_workflow_handle(workflow_id))
    ended, shown = run.ended, run.state
    # A run that closed with no outcome (terminated by hand, failed) has no review to decide,
    # and a query would wait for a worker to replay it: its record is PostgreSQL's.
    ticket = None if ended else await ticket_of(client, workflow_id, needed=run.running)
    record = await _record(s, workflow_id) if s.dsn else None
    if ticket is None and (record is None or not record.event) and shown is None:
        raise Failure(Exit.NOT_FOUND, f"{workflow_id}: no such event")
    event = record.event if record and record.event else {}
    state = ticket.state.value if ticket else event.get("state") or shown
    open_review = (ticket is not None and ticket.request_id is not None
                   and ticket.draft_version is not None and state == "AWAITING_REVIEW")
    seen = (seen_token(ticket.draft_version, ticket.request_id)  # type: ignore[arg-type]
            if open_review and ticket else None)
    # A finished event also shows its whole chain (receipt, runs), as `tollgate trace` does.
    chain = (await _finished_chain(client, s, workflow_id)
             if (_finished(state) or ended) and s.dsn else None)
    if as_json:
        emit_json({"workflow_id": workflow_id, "state": state,
                   "run_ended": open_end(state, ended),
                   "event": event,
                   "ticket": ticket.model_dump(mode="json") if ticket else None,
                   "seen": seen, "draft": record.draft if record else None,
                   "decisions": record.decisions if record else None, "trace": chain})
        return Exit.OK
    policy = (ticket.policy_version if ticket else None) or event.get("policy_version")
    click.echo(workflow_id)
    click.echo(f"  tenant {event.get('tenant_id', '?')} · {event.get('event_type', '?')} · "
               f"state {ended_state(state, ended)} · policy {policy or '-'} · "
               f"risk {ticket.risk if ticket else '-'}")
    if open_review and ticket is not None:
        click.echo(f"  review request {ticket.request_id} · draft v{ticket.draft_version} · "
                   f"roles {', '.join(ticket.required_roles) or '-'}")
        due, deadline = ticket.review_due_at, ticket.review_deadline
        click.echo(f"  SLA {_when(due)} ({_sla_left(due, now)}) · expires {_when(deadline)}")
        click.echo(f"  decide with --seen {seen}")
    print_route(ticket)
    _print_draft(ticket, record)
    _print_decisions(record)
    if chain is not None:
        from tollgate.ops.event_chain import render

        click.echo("trace")
        for line in render(chain)[1:]:
            click.echo(line)
    return Exit.OK


def _finished(state: str | None) -> bool:
    from contracts import TERMINAL_STATES

    return state in TERMINAL_STATES


async def _finished_chain(client: Client, s: Settings, workflow_id: str) -> dict[str, Any] | None:
    from tollgate.cli.trace import event_trace

    async with pool(s) as p:
        return await event_trace(p, client, s, workflow_id)


def _print_draft(ticket: ReviewTicket | None, record: ReviewRecord | None) -> None:
    row = record.draft if record else None
    version = (ticket.draft_version if ticket else None) or (row["version"] if row else None)
    draft = ticket.draft.model_dump() if ticket and ticket.draft else (row or {}).get("draft")
    if version is None:
        click.echo("draft: none yet")
        return
    source = f" ({row['provider']} / {row['model']}, {row['status']})" if row else ""
    click.echo(f"draft v{version}{source}")
    if not draft:
        for finding in (row or {}).get("findings") or []:
            click.echo(f"  finding: {finding}")
        print_flags(ticket, row)
        click.echo("  no readable draft")
        return
    print_message(draft["message"])  # an assignment spelled out (docs/triage.md)
    print_diff(ticket)
    print_flags(ticket, row)
    if not print_evidence(ticket):
        click.echo(f"  sources: {', '.join(draft.get('source_refs') or []) or '-'}")
    click.echo(f"  unknowns: {'; '.join(draft.get('unknowns') or []) or '-'}")
    if draft.get("reason"):
        click.echo(f"  why: {draft['reason']}")


def _print_decisions(record: ReviewRecord | None) -> None:
    if record is None:
        click.echo("decisions: PostgreSQL not configured (DATABASE_URL or a running "
                   "`tollgate dev`)")
        return
    click.echo("decisions")
    if not record.decisions:
        click.echo("  none")
    for d in record.decisions:
        verdict = "accepted" if d["accepted"] else f"refused: {d['refusal_code']}"
        who = f"{d['reviewer']} ({d['role']})"
        click.echo(f"  {d['at']:%Y-%m-%d %H:%M:%S}  {d['decision']:12} "
                   f"v{d['draft_version'] or '-':<3} {who:28} {verdict:34} {d['reason']!r}")


def _when(at: datetime | None) -> str:
    return f"{at.astimezone(UTC):%Y-%m-%d %H:%M} UTC" if at else "-"


async def ticket_of(client: Client, workflow_id: str, *, needed: bool = True
                    ) -> ReviewTicket | None:
    """The workflow's ``review_ticket``; None when there is no such workflow, or no worker
    answers for a finished one (``needed`` False: PostgreSQL holds its record)."""
    from temporalio.service import RPCError, RPCStatusCode

    from contracts import ReviewTicket

    try:
        return await client.get_workflow_handle(workflow_id).query(
            "review_ticket", result_type=ReviewTicket, rpc_timeout=QUERY_TIMEOUT)
    except RPCError as exc:
        if exc.status in (RPCStatusCode.NOT_FOUND, RPCStatusCode.INVALID_ARGUMENT):
            return None
        if exc.status not in (RPCStatusCode.CANCELLED, RPCStatusCode.DEADLINE_EXCEEDED):
            raise
        if not needed:
            return None
        # The SDK ends a query nobody answers in its timeout as a cancelled call, not as a
        # refusal: say what it means (docs/cli.md, exit 3).
        raise Failure(Exit.UNREACHABLE, f"{workflow_id}: no worker answered its query within "
                      f"{QUERY_TIMEOUT.total_seconds():g} s: is `tollgate dev` (or "
                      "`python worker.py`) running?") from None


async def _record(s: Settings, workflow_id: str) -> ReviewRecord | None:
    from adapters.postgres.store import PostgresStore

    # A plain pool, not a migrating one: a reviewer's command never changes the schema.
    async with pool(s) as p:
        return await PostgresStore(p).review_record(workflow_id)
