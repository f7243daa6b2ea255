"""`tollgate review show`: one record, without Temporal internals.

It reads the workflow's ``review_ticket`` query and PostgreSQL (the newest draft, every
decision) and prints the ``--seen`` token a decision must carry: the draft version and review
request it answers. The queue is ``tollgate.cli.review_list``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import click

from tollgate.cli.common import Command, connect, json_option, pool
from tollgate.cli.output import emit_json
from tollgate.cli.params import ID_TEXT
from tollgate.cli.review_evidence import print_diff, print_evidence, print_flags, print_route
from tollgate.cli.review_list import sla_left
from tollgate.cli.review_triage import print_message
from tollgate.runtime.exits import Exit, Failure

if TYPE_CHECKING:
    from temporalio.client import Client

    from adapters.postgres.reviews import ReviewRecord
    from contracts import ReviewTicket
    from tollgate.config.settings import Settings


def seen_token(draft_version: int, request_id: str) -> str:
    """What ``review show`` prints and a decision sends back (``--seen``)."""
    return f"v{draft_version}:{request_id}"


async def review_show(client: Client, s: Settings, workflow_id: str, *,
                      now: datetime | None = None, as_json: bool = False) -> int:
    """One record: state, policy, risk, the open request and its draft, every decision."""
    from tollgate.ops.review_ticket import ended_state, how_it_ended, open_end, with_reason

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
    # A run that is over may have had its end recorded after it (its dead letter's write
    # settled by a replay or the sweep, ADRs 0061, 0063): then PostgreSQL's state is the last
    # word, not the run's.
    state = (event["state"] if event.get("state") and not run.running
             else ticket.state.value if ticket else event.get("state") or shown)
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
               f"state {with_reason(ended_state(state, ended), state, event)} · "
               f"policy {policy or '-'} · "
               f"risk {ticket.risk if ticket else '-'}")
    if open_review and ticket is not None:
        click.echo(f"  review request {ticket.request_id} · draft v{ticket.draft_version} · "
                   f"roles {', '.join(ticket.required_roles) or '-'}")
        due, deadline = ticket.review_due_at, ticket.review_deadline
        click.echo(f"  SLA {_when(due)} ({sla_left(due, now)}) · expires {_when(deadline)}")
        click.echo(f"  decide with --seen {seen}")
    print_route(ticket, open_review=open_review)
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
    answers for a finished one (``needed`` False: PostgreSQL holds its record; asked with the
    shorter ``FINISHED_QUERY_TIMEOUT``; a waiting run's with ``QUERY_TIMEOUT``, both in
    ``tollgate.ops.review_ticket``)."""
    from temporalio.service import RPCError, RPCStatusCode

    from contracts import ReviewTicket
    from tollgate.ops.review_ticket import FINISHED_QUERY_TIMEOUT, QUERY_TIMEOUT

    try:
        return await client.get_workflow_handle(workflow_id).query(
            "review_ticket", result_type=ReviewTicket,
            rpc_timeout=QUERY_TIMEOUT if needed else FINISHED_QUERY_TIMEOUT)
    except RPCError as exc:
        if exc.status in (RPCStatusCode.NOT_FOUND, RPCStatusCode.INVALID_ARGUMENT):
            return None
        # FAILED_PRECONDITION: the server's own "no poller seen for task queue recently".
        if exc.status not in (RPCStatusCode.CANCELLED, RPCStatusCode.DEADLINE_EXCEEDED,
                              RPCStatusCode.FAILED_PRECONDITION):
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


@click.command("show")
@click.argument("workflow_id", type=ID_TEXT)
@json_option
def show_cmd(workflow_id: str, as_json: bool) -> Command:
    """Draft, sources, unknowns, risk, policy and every decision of WORKFLOW_ID
    (event/TENANT/KEY), and the --seen token a decision on it must carry."""

    async def go(s: Settings) -> int:
        return await review_show(await connect(s), s, workflow_id, as_json=as_json)

    return go
