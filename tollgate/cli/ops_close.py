"""`tollgate ops close`: record the end of an event whose run closed with no outcome.

A run terminated by hand (`temporal workflow terminate`), failed, timed out or canceled leaves
its PostgreSQL row in the state it stopped in, and `ops status` (PostgreSQL only) counts it as
waiting for ever. Temporal says how the run ended (``describe()``, no worker needed); the end
is then recorded in PostgreSQL as STOPPED with a reason code naming it (``run_terminated``,
``run_failed``, ``run_timed_out``, ``run_canceled``), with one audit row. A run Temporal no
longer knows (past the namespace's retention) is closed as ``run_not_found`` once its row has not
changed for longer than that retention (``adapters/postgres/run_close.py`` says why). An event
whose send was started is ended by its receipt: settled, as the run ends it after that receipt
(SUCCEEDED, REJECTED, or STOPPED for a shadow send), reason ``run_terminated_after_send`` (and
so on); open (PENDING, UNKNOWN), the write is unknown: refused until the receipt sweep settles
it. One the sweep cannot settle (the target does not hold the key) ends with
``--unresolved-write``: STOPPED ``run_terminated_write_unknown`` with the reconciler's dead letter
(``tollgate/ops/unresolved_write.py`` says on what evidence). docs/runbook.md says when to use it.

Why a flag, not the default: the end is final and says the write stays unknown, a dead letter
for a human. A close that is refused tells the operator to wait for the sweep; one that is
retried (by hand or a script) must not turn that wait into a dead letter unasked, so ending it
so is asked for by name.

Who closes it is the token's reviewer (``--token``), checked against the event's tenant by the
authority matrix (``OpsAction.RUN_CLOSE``) before anything is asked or written.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

import click

from tollgate.cli.common import Command, connect, pool
from tollgate.cli.ops_authority import authorized, operator_token
from tollgate.cli.params import ID_TEXT, TEXT
from tollgate.runtime.exits import Exit, Failure

if TYPE_CHECKING:
    from temporalio.client import Client

    from tollgate.config.settings import Settings


@click.command()
@click.argument("workflow_id", type=ID_TEXT)
@click.option("--reason", required=True, type=TEXT, help="why (recorded in the audit)")
@click.option("--unresolved-write", "unresolved", is_flag=True,
              help="end an event whose receipt stays open and whose key the target does not "
              "hold: STOPPED with a dead letter for the write (docs/runbook.md)")
@operator_token
def close(workflow_id: str, reason: str, unresolved: bool, token: str | None) -> Command:
    """Record the end of WORKFLOW_ID (event/TENANT/KEY) whose run was terminated, failed, timed
    out or canceled: STOPPED, reason run_terminated (run_failed, run_timed_out, run_canceled),
    audited; one Temporal no longer knows, run_not_found, once its record has not changed for
    the namespace's retention. An event whose send was started ends as its settled receipt
    says (SUCCEEDED, REJECTED, STOPPED for a shadow send), reason run_terminated_after_send
    (and so on). With --unresolved-write, one whose receipt stayed open past the sweep's
    15 minutes and whose key the target (asked once more) does not hold ends STOPPED,
    run_terminated_write_unknown, the receipt left open, with an unreconciled_write dead
    letter. Exit 4 for an id neither knows, 1 while the run runs, once it completed with
    an outcome, while its receipt is open (the write is unknown: tollgate ops sweep settles
    it), or for a record Temporal does not know that changed within the retention; 3 when
    the target does not answer the lookup; closing it again: exit 0. Needs an on_call's,
    incident_commander's or change_owner's token of the event's tenant (exit 1 otherwise,
    audited; 8 without one): the transition and audit row name the token's reviewer."""

    async def go(s: Settings) -> int:
        from temporalio.client import WorkflowExecutionStatus
        from temporalio.service import RPCError, RPCStatusCode

        from adapters.postgres.run_close import NOT_FOUND, RunCloses
        from policies.authority import OpsAction
        from tollgate.intake.repeat import ended_without_outcome
        from tollgate.ops import unresolved_write as uw

        # Before Temporal or the target is asked: a token of another tenant learns nothing of
        # this event, not even whether it exists.
        async with pool(s, migrate=True) as p:
            tenant = await RunCloses(p).tenant_of(workflow_id) or _tenant_in(workflow_id)
        who = await authorized(s, token, OpsAction.RUN_CLOSE, tenant=tenant, target=workflow_id)
        client = await connect(s)
        retention: timedelta | None = None
        try:
            found = await client.get_workflow_handle(workflow_id).describe()
        except RPCError as exc:
            if exc.status == RPCStatusCode.INVALID_ARGUMENT:
                raise Failure(Exit.NOT_FOUND, f"{workflow_id}: no such workflow") from None
            if exc.status != RPCStatusCode.NOT_FOUND:
                raise
            found, retention = None, await _retention(client)
        if found is not None and found.status == WorkflowExecutionStatus.RUNNING:
            raise Failure(Exit.REFUSED, f"{workflow_id}: still running: it ends on its own, "
                          "or terminate it first")
        ended = NOT_FOUND if found is None else ended_without_outcome(found.status)
        if ended is None:
            raise Failure(Exit.REFUSED, f"{workflow_id}: its run completed with an outcome: "
                          "nothing to close")
        async with pool(s, migrate=True) as p:
            unknown = await uw.unresolved_write(s, p, workflow_id) if unresolved else None
            done = await RunCloses(p).close(workflow_id, ended=ended, operator=who.reviewer,
                                            reason=reason, quiet_for=retention,
                                            unresolved=unknown)
        if done.result == "no_record" and found is None:
            raise Failure(Exit.NOT_FOUND, f"{workflow_id}: no such workflow")
        if done.result == "recent":
            raise Failure(Exit.REFUSED, f"{workflow_id}: not closed: Temporal does not know "
                          f"it, yet its record ({done.state}) changed {_age(done.quiet)} ago, "
                          f"within the namespace's retention ({_age(retention)}): is this the "
                          "Temporal and namespace that ran it? (TEMPORAL_ADDRESS, "
                          "TEMPORAL_NAMESPACE)")
        if done.result == "no_record":
            raise Failure(Exit.NOT_FOUND, f"{workflow_id}: no event record in PostgreSQL "
                          f"(the run {ended} before it was admitted): nothing to close")
        if done.result == "write_unknown":
            raise uw.write_unknown(workflow_id, done.state, done.receipt_status, done.quiet)
        if done.result == "write_recent" and unknown is not None:
            raise uw.too_recent(workflow_id, done.state, done.receipt_status, done.quiet,
                                unknown.open_for)
        if done.result == "not_after_send":
            raise uw.not_after_send(workflow_id, done.state, done.receipt_status)
        if done.result == "ended":
            click.echo(f"{workflow_id}: already ended {done.state}"
                       + (f" ({done.reason_code})" if done.reason_code else "")
                       + ": nothing to do")
        else:
            click.echo(f"{workflow_id}: closed {done.state} -> {done.to_state} "
                       f"({done.reason_code}), run {ended}"
                       + (f", receipt {done.receipt_status}" if done.receipt_status else "")
                       + (f", dead letter {done.dead_letter}" if done.dead_letter else "")
                       + "; audited")
        return Exit.OK

    return go


def _tenant_in(workflow_id: str) -> str:
    """The tenant an event's id names (event/TENANT/KEY), for an id PostgreSQL has no record
    of; any other id is every tenant's ('*'), so only an operator of every tenant acts on it."""
    kind, _, rest = workflow_id.partition("/")
    tenant = rest.partition("/")[0]
    return tenant if kind == "event" and tenant else "*"


async def _retention(client: Client) -> timedelta:
    """How long the namespace keeps a closed run: a run it does not know ended before that."""
    from temporalio.api.workflowservice.v1 import DescribeNamespaceRequest

    found = await client.workflow_service.describe_namespace(
        DescribeNamespaceRequest(namespace=client.namespace))
    return found.config.workflow_execution_retention_ttl.ToTimedelta()


def _age(span: timedelta | None) -> str:
    hours = int((span or timedelta(0)).total_seconds() // 3600)
    return f"{hours // 24}d {hours % 24:02d}h" if hours >= 24 else f"{hours}h"
