"""`tollgate ops`: what an operator does. Kill switches and dead letters need only PostgreSQL,
so they work while the Temporal server is down; state, replay and sweep need Temporal too."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from tollgate.cli.common import Command, connect, json_option, pool
from tollgate.cli.ops_authority import authorized, operator_token
from tollgate.cli.ops_backup import backup_cmd, restore_cmd
from tollgate.cli.ops_close import close
from tollgate.cli.ops_contacts import contacts
from tollgate.cli.ops_dlq import dlq
from tollgate.cli.ops_incident import incident
from tollgate.cli.ops_outbox import outbox
from tollgate.cli.ops_rollout import modes, rollout
from tollgate.cli.ops_status import status
from tollgate.cli.ops_sweep import sweep
from tollgate.cli.output import emit_json, table
from tollgate.cli.params import COUNT, ID_TEXT, TEXT
from tollgate.cli.trace import audit
from tollgate.runtime.exits import Exit, Failure

if TYPE_CHECKING:
    from tollgate.config.settings import Settings


@click.group()
def ops() -> None:
    """Operator: state, kill switches, dead letters, receipt sweep, rollout modes."""


@ops.command()
@click.argument("workflow_id", type=ID_TEXT)
@json_option
def state(workflow_id: str, as_json: bool) -> Command:
    """Current state of WORKFLOW_ID (event/TENANT/KEY), as the Web UI filters on it."""

    async def go(s: Settings) -> int:
        from temporalio.client import WorkflowExecutionStatus
        from temporalio.service import RPCError, RPCStatusCode

        from contracts import TERMINAL_STATES
        from tollgate.intake.repeat import ended_without_outcome
        from tollgate.ops.review_ticket import ended_state, recorded_reason, with_reason
        from tollgate.ops.target_queues import said, waits_within

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
                 if ended or values[0] in TERMINAL_STATES else None)
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


def _switch_command(name: str, closing: bool) -> click.Command:
    @click.command(name)
    @click.option("--adapter", default="*", type=ID_TEXT,
                  help="adapter name, or * for all")
    @click.option("--tenant", default="*", type=ID_TEXT,
                  help="tenant id, or * for all (a token for every tenant)")
    @click.option("--reason", required=closing, type=TEXT, hidden=not closing,
                  help="why (recorded)")
    @click.option("--root-cause", type=TEXT, hidden=closing,
                  help="what caused the incident, as found (recorded; the runbook's field)")
    @click.option("--fixture", type=TEXT, hidden=closing,
                  help="the fixture or test that now covers it (recorded)")
    @click.option("--canary", type=COUNT, metavar="N", hidden=closing,
                  help="let N actions through, then close again until a plain reopen confirms")
    @operator_token
    def command(adapter: str, tenant: str, reason: str | None, root_cause: str | None,
                fixture: str | None, canary: int | None, token: str | None) -> Command:
        async def go(s: Settings) -> int:
            from adapters.postgres.ops import OpsStore
            from policies.authority import OpsAction

            target = f"{adapter}/{tenant}"
            if closing:
                who = await authorized(s, token, OpsAction.KILL_SWITCH_CLOSE, tenant=tenant,
                                       target=target)
                runbook: dict[str, object] = {}
            else:
                passed, left = (None, None) if canary else await _canary_of(s, adapter, tenant)
                runbook = {"root_cause": root_cause, "fixture": fixture,
                           "canary": canary or passed}
                if left:  # a canary still running: the refusal says so (not recorded)
                    runbook["canary_left"] = left
                who = await authorized(s, token, OpsAction.KILL_SWITCH_REOPEN, tenant=tenant,
                                       target=target, runbook=runbook)
            async with pool(s, migrate=True) as p:
                await OpsStore(p).set_switch(
                    adapter=adapter, tenant_id=tenant, closed=closing, actor=who.reviewer,
                    reason=reason or f"reopened: {root_cause}", canary=None if closing else canary,
                    detail=runbook or None)
            what = "closed" if closing else (f"reopened as a canary of {canary}" if canary
                                             else "reopened")
            click.echo(f"kill switch {target} {what}")
            if not closing:
                click.echo(await _wake_switch(s, adapter, tenant))
            return Exit.OK

        return go

    command.help = ("Close a kill switch: no action of that adapter/tenant is sent. Needs a "
                    "token of an incident_commander, on_call or the circuit." if closing
                    else "Reopen a kill switch by the runbook: --root-cause, --fixture, and "
                    "--canary N (or a canary that passed since). Needs a change_owner's token.")
    return command


async def _canary_of(s: Settings, adapter: str, tenant: str) -> tuple[str | None, int | None]:
    """A plain reopen is the runbook's confirmation: only after this switch's canary passed
    (the row closed itself with no canary actions left): ``"passed"`` then, else None; and
    the actions a canary still running has left (None when none runs)."""
    from adapters.postgres.ops import OpsStore

    async with pool(s, migrate=True) as p:
        rows = await OpsStore(p).switches()
    row = next((r for r in rows if (r["adapter"], r["tenant_id"]) == (adapter, tenant)), None)
    if row is None:
        return None, None
    passed = row["closed"] and row["canary_remaining"] == 0
    running = not row["closed"] and row["canary_remaining"]
    return ("passed" if passed else None), (int(row["canary_remaining"]) if running else None)


async def _wake_switch(s: Settings, adapter: str, tenant: str) -> str:
    """The reopened switch's held runs go now; when they cannot be reached from here, on their
    fallback timer. The switch is open already, so no failure here undoes or fails the reopen."""
    from temporalio.service import RPCError

    from contracts.search_attributes import kill_switch_key
    from tollgate.codec.keyring import KeyRingError
    from tollgate.ops.wake import wake_held

    try:
        woken = await wake_held(await connect(s), kill_switch_key(adapter, tenant))
    except Failure:
        return "held runs not woken (Temporal unreachable): they retry on their fallback timer"
    # No key ring here, or a server without visibility (the time-skipping test server): best
    # effort, never the reopen's failure.
    except (KeyRingError, RPCError) as exc:
        return (f"held runs not woken ({type(exc).__name__}): they retry on their fallback "
                "timer")
    return f"woke {woken} held run(s)"


ops.add_command(_switch_command("kill", closing=True))
ops.add_command(_switch_command("reopen", closing=False))


@ops.command()
@json_option
def switches(as_json: bool) -> Command:
    """List the kill switches (no row: everything open)."""

    async def go(s: Settings) -> int:
        from adapters.postgres.ops import OpsStore

        async with pool(s, migrate=True) as p:
            rows = await OpsStore(p).switches()
        if as_json:
            emit_json(rows)
        elif not rows:
            click.echo("no kill switch rows: everything open")
        else:
            table(["switch", "state", "canary left", "reason", "by", "at"], [
                (f"{r['adapter']}/{r['tenant_id']}", "CLOSED" if r["closed"] else "open",
                 "-" if r["canary_remaining"] is None else r["canary_remaining"], r["reason"],
                 r["changed_by"], f"{r['changed_at']:%Y-%m-%d %H:%M}") for r in rows])
        return Exit.OK

    return go


@ops.command()
def migrate() -> Command:
    """Apply the database migrations not applied yet, then stop (a deployment's one-off job;
    every pool also applies them when it opens)."""

    async def go(s: Settings) -> int:
        from adapters.postgres.pool import MigrationChecksumError
        from adapters.postgres.pool import migrate as apply_migrations

        async with pool(s) as p:
            try:
                applied = await apply_migrations(p)
            except MigrationChecksumError as exc:
                raise Failure(Exit.REFUSED, str(exc)) from None
        click.echo(f"applied {', '.join(applied)}" if applied else "schema up to date")
        return Exit.OK

    return go


ops.add_command(dlq)
ops.add_command(outbox)
ops.add_command(status)
ops.add_command(sweep)
ops.add_command(close)
ops.add_command(backup_cmd)
ops.add_command(restore_cmd)
ops.add_command(audit)
ops.add_command(rollout)
ops.add_command(modes)
ops.add_command(contacts)
ops.add_command(incident)
