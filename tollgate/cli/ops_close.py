"""`tollgate ops close`: record the end of an event whose run closed with no outcome.

A run terminated by hand (`temporal workflow terminate`), failed, timed out or canceled leaves
its PostgreSQL row in the state it stopped in, and `ops status` (PostgreSQL only) counts it as
waiting for ever. Temporal says how the run ended (``describe()``, no worker needed); the end
is then recorded in PostgreSQL as STOPPED with a reason code naming it (``run_terminated``,
``run_failed``, ``run_timed_out``, ``run_canceled``), with one audit row. docs/runbook.md says
when to use it.
"""

from __future__ import annotations

import click

from tollgate.cli.common import ID_TEXT, TEXT, Command, connect, pool
from tollgate.config.settings import Settings
from tollgate.runtime.exits import Exit, Failure


@click.command()
@click.argument("workflow_id", type=ID_TEXT)
@click.option("--operator", required=True, type=ID_TEXT,
              help="who closes it (recorded in the audit and the transition)")
@click.option("--reason", required=True, type=TEXT, help="why (recorded in the audit)")
def close(workflow_id: str, operator: str, reason: str) -> Command:
    """Record the end of WORKFLOW_ID (event/TENANT/KEY) whose run was terminated, failed, timed
    out or canceled: STOPPED, reason run_terminated (run_failed, run_timed_out, run_canceled),
    audited. Exit 4 for no such workflow or event record, 1 while the run runs, once it
    completed with an outcome, or when its send was started; closing it again: exit 0."""

    async def go(s: Settings) -> int:
        from temporalio.client import WorkflowExecutionStatus
        from temporalio.service import RPCError, RPCStatusCode

        from adapters.postgres.run_close import RunCloses
        from tollgate.intake.repeat import ended_without_outcome

        client = await connect(s)
        try:
            found = await client.get_workflow_handle(workflow_id).describe()
        except RPCError as exc:
            if exc.status in (RPCStatusCode.NOT_FOUND, RPCStatusCode.INVALID_ARGUMENT):
                raise Failure(Exit.NOT_FOUND, f"{workflow_id}: no such workflow") from None
            raise
        if found.status == WorkflowExecutionStatus.RUNNING:
            raise Failure(Exit.REFUSED, f"{workflow_id}: still running: it ends on its own, "
                          "or terminate it first")
        ended = ended_without_outcome(found.status)
        if ended is None:
            raise Failure(Exit.REFUSED, f"{workflow_id}: its run completed with an outcome: "
                          "nothing to close")
        async with pool(s, migrate=True) as p:
            done = await RunCloses(p).close(workflow_id, ended=ended, operator=operator,
                                            reason=reason)
        if done.result == "no_record":
            raise Failure(Exit.NOT_FOUND, f"{workflow_id}: no event record in PostgreSQL "
                          f"(the run {ended} before it was admitted): nothing to close")
        if done.result == "send_started":
            raise Failure(Exit.REFUSED, f"{workflow_id}: not closed: its send was started "
                          f"(state {done.state}, receipt {done.receipt_status}); settle it "
                          "first (tollgate ops sweep, docs/runbook.md)")
        if done.result == "ended":
            click.echo(f"{workflow_id}: already ended {done.state}"
                       + (f" ({done.reason_code})" if done.reason_code else "")
                       + ": nothing to do")
        else:
            click.echo(f"{workflow_id}: closed {done.state} -> STOPPED ({done.reason_code}), "
                       f"run {ended}; audited")
        return Exit.OK

    return go
