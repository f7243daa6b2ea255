"""`tollgate ops outbox`: the HTTP intake's outbox rows the relay moved aside or has not sent,
and the two things an operator does about one: retry it or drop it (each audited).

Identifiers only (ids, workflow ids, tenants, entity ids, tries, error codes, times): never the
posted body, which carries customer data. docs/runbook.md, "Outbox", says when to do which.
Retry and drop take who acts from the token (``--token``), checked against the row's tenant
(``OpsAction.OUTBOX_RETRY``, ``OUTBOX_DROP``: policies/authority.py says why they differ) before
anything of the row is said: an id with no row is every tenant's (``authorized_row``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from tollgate.cli.common import Command, json_option, pool
from tollgate.cli.ops_authority import (
    authorized_row,
    operator_token,
    read_scope,
    readable_row,
    reader,
)
from tollgate.cli.output import emit_json, table
from tollgate.cli.params import ID_TEXT, ROW_ID, TEXT
from tollgate.runtime.exits import Exit, Failure

if TYPE_CHECKING:
    from tollgate.config.settings import Settings


@click.group()
def outbox() -> None:
    """Outbox rows moved aside after their bounded tries, or still waiting for the relay."""


#: What an empty list says, per selection ("no such outbox rows" named none of them).
_NONE = {"aside": "no outbox rows moved aside", "live": "no outbox rows waiting for the relay",
         "all": "no unsent outbox rows (none waiting, none moved aside)"}


@outbox.command("list")
@click.option("--live", "which", flag_value="live", help="rows still waiting for the relay")
@click.option("--all", "which", flag_value="all", help="every unsent row, aside or waiting")
@click.option("--limit", type=click.IntRange(min=1, max=10_000), default=100, show_default=True)
@click.option("--tenant", type=ID_TEXT, help="only this tenant's rows")
@operator_token
@json_option
def list_cmd(which: str | None, limit: int, tenant: str | None, token: str | None,
             as_json: bool) -> Command:
    """Rows moved aside (the default), oldest first; with --token, the token's tenant's only
    (a --tenant naming another is refused, exit 1)."""

    async def go(s: Settings) -> int:
        from adapters.postgres.outbox_admin import OutboxAdmin

        only = read_scope(await reader(s, token), tenant, rows="outbox rows")
        async with pool(s, migrate=True) as p:
            rows = await OutboxAdmin(p).rows(which or "aside", limit,  # type: ignore[arg-type]
                                             tenant=only)
        if as_json:
            emit_json(rows)
        elif not rows:
            click.echo(_NONE[which or "aside"] + (f" for {only}" if only else ""))
        else:
            table(["id", "tenant", "entity", "workflow", "tries", "last error", "aside"], [
                (r["id"], r["tenant_id"], r["entity_id"] or "-", r["workflow_id"],
                 r["attempts"], r["last_error"] or "-", r["parked_reason"] or "-")
                for r in rows])
        return Exit.OK

    return go


@outbox.command()
@click.argument("row_id", metavar="ID", type=ROW_ID)
@operator_token
@json_option
def show(row_id: int, token: str | None, as_json: bool) -> Command:
    """One outbox row: its workflow id, tenant, entity, tries, last error and state. With
    --token, one of the token's tenant only: another tenant's ID and an ID with no row are
    refused alike (exit 1, audited)."""

    async def go(s: Settings) -> int:
        from adapters.postgres.outbox_admin import OutboxAdmin
        from policies.authority import OpsRead

        row = await readable_row(s, token, OpsRead.OUTBOX_READ,
                                 read=lambda p: OutboxAdmin(p).row(row_id),
                                 target=f"outbox/{row_id}", missing=f"no outbox row {row_id}")
        if as_json:
            emit_json(row)
        else:
            for key, value in row.items():
                click.echo(f"{key:16} {'-' if value is None else value}")
        return Exit.OK

    return go


def _action(name: str, verb: str, doc: str) -> click.Command:
    @click.argument("row_id", metavar="ID", type=ROW_ID)
    @click.option("--reason", required=True, type=TEXT, help="why (recorded in the audit)")
    @operator_token
    def command(row_id: int, reason: str, token: str | None) -> Command:
        async def go(s: Settings) -> int:
            from adapters.postgres.outbox_admin import OutboxAdmin
            from policies.authority import OpsAction

            action = OpsAction.OUTBOX_RETRY if name == "retry" else OpsAction.OUTBOX_DROP
            _, who = await authorized_row(s, token, action,
                                          read=lambda p: OutboxAdmin(p).row(row_id),
                                          target=f"outbox/{row_id}",
                                          missing=f"no outbox row {row_id}")
            async with pool(s, migrate=True) as p:
                admin = OutboxAdmin(p)
                act = admin.retry if name == "retry" else admin.drop
                done = await act(row_id, actor=who.reviewer, reason=reason)
            if not done:
                raise Failure(Exit.REFUSED, f"outbox row {row_id} cannot be {verb}: "
                              "see `tollgate ops outbox show` for its state")
            click.echo(f"outbox row {row_id} {verb}")
            return Exit.OK

        return go

    command.__doc__ = doc
    return outbox.command(name)(command)


_action("retry", "retried", "Put a row that was moved aside back in line, its tries counted "
        "from zero (exit 1 when it is not aside). Safe: the same workflow id, so a row that "
        "did reach Temporal is answered as a duplicate. Needs an on_call's, "
        "incident_commander's or change_owner's token of the row's tenant (exit 1 otherwise, "
        "audited; 8 without one); an ID with no row is refused the same way, as every "
        "tenant's.")
_action("drop", "dropped", "Never send this row; it stays as the record of what was posted "
        "(exit 1 when it was sent or dropped already). Needs a change_owner's or "
        "incident_commander's token of the row's tenant (exit 1 otherwise, audited; 8 "
        "without one); an ID with no row is refused the same way, as every tenant's.")
