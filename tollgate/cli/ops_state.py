"""`tollgate ops state WORKFLOW_ID`: the state an event is in, from Temporal and, for a run
that ended, from PostgreSQL."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from tollgate.cli.common import Command, connect, json_option, pool
from tollgate.cli.ops_authority import check_read, operator_token, reader
from tollgate.cli.output import emit_json
from tollgate.cli.params import ID_TEXT
from tollgate.runtime.exits import Exit, Failure

if TYPE_CHECKING:
    from tollgate.config.settings import Settings


@click.command()
@click.argument("workflow_id", type=ID_TEXT)
@operator_token
@json_option
def state(workflow_id: str, token: str | None, as_json: bool) -> Command:
    """Current state of WORKFLOW_ID (event/TENANT/KEY), as the Web UI filters on it. With
    --token, an event of the token's tenant only (its record's tenant, else its run's):
    another tenant's and none at all are refused alike (exit 1, audited)."""

    async def go(s: Settings) -> int:
        from temporalio.client import WorkflowExecutionStatus
        from temporalio.service import RPCError, RPCStatusCode

        from contracts import TERMINAL_STATES
        from policies.authority import OpsRead
        from tollgate.intake.repeat import ended_without_outcome
        from tollgate.ops.review_ticket import ended_state, recorded_reason, with_reason
        from tollgate.ops.target_queues import said, waits_within

        who = await reader(s, token)
        client = await connect(s)
        try:
            desc = await client.get_workflow_handle(workflow_id).describe()
        except RPCError as exc:
            if exc.status != RPCStatusCode.NOT_FOUND:
                raise
            desc = None
        ended = "not found" if desc is None else ended_without_outcome(desc.status)
        values = (desc.search_attributes.get("TollgateState") if desc else None) or ["RECEIVED"]
        # A run that closed with no outcome keeps the state it stopped in as its search
        # attribute for ever, and one past retention is gone: the end `ops close` recorded
        # is PostgreSQL's, shown as `review show` shows it. A final state's reason is only
        # PostgreSQL's too (the search attribute holds the state alone).
        event = (await _recorded_event(s, workflow_id)
                 if who or ended or values[0] in TERMINAL_STATES else None)
        # A run's tenant is its record's, else its search attribute's; a run with neither
        # (none at all, or one that is no event's) is every tenant's.
        run_tenant = (desc.search_attributes.get("TollgateTenant") if desc else None) or [None]
        await check_read(s, who, OpsRead.EVENT_READ, target=workflow_id,
                         tenant=(event or {}).get("tenant_id") or str(run_tenant[0] or ""))
        if desc is None and event is None:
            raise Failure(Exit.NOT_FOUND, f"{workflow_id}: no such event")
        # So is an end recorded after a run that completed (its dead letter's write settled
        # by a replay or the sweep, ADRs 0061, 0063): the search attribute keeps the run's
        # last state.
        over = ended or (desc is not None and desc.status == WorkflowExecutionStatus.COMPLETED)
        shown = str(event["state"]) if over and event else str(values[0])
        status = "NOT_FOUND" if desc is None else desc.status.name if desc.status else "UNKNOWN"
        # An open run's send, or its reconciler's lookup, may wait with no timeout on a target
        # queue no worker polls.
        waits = await waits_within(client, desc) if status == "RUNNING" and desc else None
        if as_json:
            # The state alone, for a script to compare; the reason beside it when there is one.
            reason = recorded_reason(shown, event or {})
            emit_json({"workflow_id": workflow_id, "state": shown, "status": status}
                      | ({"reason_code": reason} if reason else {})
                      | ({"waits_for": waits} if status == "RUNNING" else {}))
        else:
            click.echo(f"{with_reason(ended_state(shown, ended), shown, event or {})}"
                       + (f" · {said(waits)}" if waits else ""))
        return Exit.OK

    return go


async def _recorded_event(s: Settings, workflow_id: str) -> dict[str, Any] | None:
    """The event PostgreSQL holds for ``workflow_id`` (its ``state`` and ``reason_code``), or
    the quarantined delivery's; None without a database, or when it does not answer (Temporal's
    answer then stands)."""
    from adapters.postgres.store import PostgresStore

    if not s.dsn:
        return None
    try:
        async with pool(s) as p:
            return await PostgresStore(p).recorded_state(workflow_id)
    except Failure:
        return None
