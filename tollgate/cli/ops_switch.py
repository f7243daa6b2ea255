"""`tollgate ops kill|reopen|switches`: the kill switches. They need only PostgreSQL, so they
work while the Temporal server is down (a reopen wakes the runs it held when it can)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from tollgate.cli.common import Command, connect, json_option, pool
from tollgate.cli.ops_authority import authorized, operator_token, read_scope, reader
from tollgate.cli.output import emit_json, table
from tollgate.cli.params import COUNT, ID_TEXT, TEXT
from tollgate.runtime.exits import Exit, Failure

if TYPE_CHECKING:
    from tollgate.config.settings import Settings


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


kill = _switch_command("kill", closing=True)
reopen = _switch_command("reopen", closing=False)


@click.command()
@operator_token
@json_option
def switches(token: str | None, as_json: bool) -> Command:
    """List the kill switches (no row: everything open). With --token, those covering the
    token's tenant: its own and the global ones ('*'), which hold its sends too (ADR 0076)."""

    async def go(s: Settings) -> int:
        from adapters.postgres.ops import OpsStore

        only = read_scope(await reader(s, token), None, rows="kill switches")
        async with pool(s, migrate=True) as p:
            rows = await OpsStore(p).switches(only)
        if as_json:
            emit_json(rows)
        elif not rows:
            click.echo("no kill switch rows" + (f" for {only}" if only else "")
                       + ": everything open")
        else:
            table(["switch", "state", "canary left", "reason", "by", "at"], [
                (f"{r['adapter']}/{r['tenant_id']}", "CLOSED" if r["closed"] else "open",
                 "-" if r["canary_remaining"] is None else r["canary_remaining"], r["reason"],
                 r["changed_by"], f"{r['changed_at']:%Y-%m-%d %H:%M}") for r in rows])
        return Exit.OK

    return go
