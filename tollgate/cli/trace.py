"""`tollgate trace EVENT` (one event's whole chain) and `tollgate ops audit --verify` (every
chain of a tenant, or of all). Both recompute the tamper-evident audit chain on request."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from tollgate.cli.common import Command, connect, json_option, pool
from tollgate.cli.ops_authority import check_read, operator_token, read_scope, reader
from tollgate.cli.output import emit_json
from tollgate.cli.params import ID_TEXT
from tollgate.runtime.exits import Exit, Failure

if TYPE_CHECKING:
    import asyncpg
    from temporalio.client import Client

    from tollgate.config.settings import Settings


async def event_trace(p: asyncpg.Pool, client: Client | None, s: Settings, workflow_id: str, *,
                      verify: bool = False) -> dict[str, Any] | None:
    """The assembled chain of one event (None when PostgreSQL has no record of it)."""
    from adapters.postgres.audit import AuditStore
    from adapters.postgres.trace import TraceStore
    from tollgate.ops.event_chain import assemble, runs

    chain = await TraceStore(p).event_chain(workflow_id)
    if chain is None:
        return None
    trace = assemble(workflow_id, chain, await runs(client, s, chain, workflow_id))
    if verify:
        problems = await AuditStore(p).verify_event(workflow_id)
        trace["audit"] = {"problems": [f"{x.source} {x.row_key}: {x.problem}" for x in problems]}
    return trace


async def _client_or_none(s: Settings) -> Client | None:
    # The PostgreSQL half of a trace is worth printing while Temporal is down.
    try:
        return await connect(s)
    except Failure:
        return None


@click.command()
@click.argument("event", type=ID_TEXT)
@click.option("--verify", is_flag=True,
              help="recompute the event's audit chain; exit 1 naming any row that was edited, "
                   "deleted or written around it")
@operator_token
@json_option
def trace(event: str, verify: bool, token: str | None, as_json: bool) -> Command:
    """The whole chain of EVENT (a workflow id event/TENANT/KEY, or an event id): envelope,
    intake, context fields, drafts, policy and gate, reviews, receipt, reconciliation, dead
    letters, and a Web UI link for each run. With --token, an event of the token's tenant
    only: another tenant's and none at all are refused alike (exit 1, audited)."""

    async def go(s: Settings) -> int:
        from adapters.postgres.trace import TraceStore
        from policies.authority import OpsRead
        from tollgate.ops.event_chain import render

        who = await reader(s, token)
        async with pool(s) as p:
            found = await TraceStore(p).workflows_for(event, read_scope(who, None, rows=""))
        if not found:  # with a token, none of its tenant's: another tenant's, or none at all
            await check_read(s, who, OpsRead.EVENT_READ, tenant=None, target=event)
            raise Failure(Exit.NOT_FOUND, f"{event}: no such event")
        async with pool(s) as p:
            if len(found) > 1:
                raise Failure(Exit.USAGE, f"{event}: {len(found)} tenants used this event id; "
                              "name the workflow id (event/TENANT/KEY)")
            t = await event_trace(p, await _client_or_none(s), s, found[0], verify=verify)
        if t is None:
            raise Failure(Exit.NOT_FOUND, f"{event}: no such event")
        if as_json:
            emit_json(t)
        else:
            for line in render(t):
                click.echo(line)
        return Exit.REFUSED if t.get("audit", {}).get("problems") else Exit.OK

    return go


@click.command()
@click.option("--verify", is_flag=True,
              help="recompute every event's audit chain and each tenant's chain head")
@click.option("--tenant", default=None, type=ID_TEXT, help="only this tenant")
@operator_token
@json_option
def audit(verify: bool, tenant: str | None, token: str | None, as_json: bool) -> Command:
    """Check the tamper-evident audit: exit 1 naming each row edited, deleted or written around
    the chain (docs/runbook.md says what to do). With --token, the token's tenant's chains and
    heads only (ADR 0076): a --tenant naming another is refused, exit 1."""

    async def go(s: Settings) -> int:
        from adapters.postgres.audit import AuditStore

        if not verify:  # the one thing it does today; named so a later listing mode can come
            raise Failure(Exit.USAGE, "ops audit: say --verify (recompute the audit chains)")
        only = read_scope(await reader(s, token), tenant, rows="audit chains")
        async with pool(s, migrate=True) as p:
            checked, problems = await AuditStore(p).verify_all(only)
        if as_json:
            emit_json({"events_checked": checked, "problems": [p.__dict__ for p in problems]})
        else:
            # Events' chains and the tenants' contact-point chains (contacts/<tenant>).
            click.echo(f"{checked} chain(s) checked: "
                       + ("intact" if not problems else f"{len(problems)} problem(s)"))
            for problem in problems:
                click.echo(f"  ! {problem.line()}")
        return Exit.REFUSED if problems else Exit.OK

    return go
