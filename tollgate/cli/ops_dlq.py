"""`tollgate ops dlq`: list, show, approve, replay and close dead letters."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from tollgate.cli.common import Command, connect, json_option, pool
from tollgate.cli.ops_authority import (
    authorized_row,
    operator_token,
    read_scope,
    readable_row,
    reader,
)
from tollgate.cli.output import emit_json, table
from tollgate.cli.params import ID_TEXT, ROW_ID, TEXT
from tollgate.runtime.exits import Exit

if TYPE_CHECKING:
    from policies.authority import OpsAction
    from tollgate.config.settings import Settings
    from tollgate.runtime.identity import Identity

STATUSES = ["OPEN", "APPROVED", "REPLAYED", "CLOSED"]


@click.group()
def dlq() -> None:
    """Dead letters: what failed for good, with its owner and replay plan."""


@dlq.command("list")
@click.option("--status", type=click.Choice(STATUSES), help="only dead letters in this status")
@click.option("--tenant", type=ID_TEXT, help="only this tenant's dead letters")
@operator_token
@json_option
def list_cmd(status: str | None, tenant: str | None, token: str | None,
             as_json: bool) -> Command:
    """Dead letters, oldest first; with --token, the token's tenant's only (a --tenant naming
    another is refused, exit 1)."""

    async def go(s: Settings) -> int:
        from adapters.postgres.ops import OpsStore

        only = read_scope(await reader(s, token), tenant, rows="dead letters")
        async with pool(s, migrate=True) as p:
            rows = await OpsStore(p).dead_letters(status, only)
        if as_json:
            emit_json(rows)
        elif not rows:
            click.echo("no dead letters" + (f" in status {status}" if status else "")
                       + (f" for {only}" if only else ""))
        else:
            table(["id", "status", "class/code", "workflow", "owner"], [
                (r["id"], r["status"], f"{r['error_class']}/{r['error_code']}",
                 r["workflow_id"], r["owner"]) for r in rows])
        return Exit.OK

    return go


@dlq.command()
@click.argument("dl_id", metavar="ID", type=ROW_ID)
@operator_token
@json_option
def show(dl_id: int, token: str | None, as_json: bool) -> Command:
    """One dead letter: its class, code, what the code means, owner, redacted payload and
    replay plan. With --token, one of the token's tenant only: another tenant's ID and an ID
    with no dead letter are refused alike (exit 1, audited)."""

    async def go(s: Settings) -> int:
        from adapters.postgres.ops import OpsStore
        from policies.authority import OpsRead
        from tollgate.ops.dead_letter_codes import meaning

        row: dict = {}
        found = await readable_row(s, token, OpsRead.DEAD_LETTER_READ,
                                   read=lambda p: OpsStore(p).dead_letter_row(dl_id),
                                   target=f"dead_letter/{dl_id}",
                                   missing=f"no dead letter {dl_id}")
        for key, value in found.items():
            if key != "replay_input":
                row[key] = value
            if key == "error_code":  # read next to the code it explains
                row["meaning"] = meaning(value)
            # OPEN after a replay: only a replay that stopped again sets it back (ADR 0059).
            if key == "status" and value == "OPEN" and found["replays"]:
                row["reopened"] = (f"after replay {found['replays']} stopped again: "
                                   "approve to replay again")
        if as_json:
            emit_json(row)
        else:
            for key, value in row.items():
                click.echo(f"{key:16} {'-' if value in (None, '') else value}")
        return Exit.OK

    return go


async def _authorized_row(s: Settings, dl_id: int, token: str | None,
                          action: OpsAction) -> tuple[dict, Identity]:
    """Dead letter ``dl_id`` and the token's identity, checked against its tenant before
    anything of it is said (``authorized_row``: one that does not exist is every tenant's)."""
    from adapters.postgres.ops import OpsStore

    return await authorized_row(s, token, action,
                                read=lambda p: OpsStore(p).dead_letter_row(dl_id),
                                target=f"dead_letter/{dl_id}", missing=f"no dead letter {dl_id}")


@dlq.command()
@click.argument("dl_id", metavar="ID", type=ROW_ID)
@click.option("--reason", required=True, type=TEXT, help="why it is safe to try again (recorded)")
@operator_token
def approve(dl_id: int, reason: str, token: str | None) -> Command:
    """Allow one replay of dead letter ID (exit 1 when it is closed, is never replayed from
    here: its replay plan says what to do instead, or while an earlier replay of it may still
    run: asks Temporal, exit 3 when it does not answer). Needs a change_owner's or an
    incident_commander's token of the dead letter's tenant (exit 1 otherwise, audited; 8
    without one); an ID with no dead letter is refused the same way, as every tenant's."""

    async def go(s: Settings) -> int:
        from policies.authority import OpsAction
        from tollgate.ops.actions import approve_replay

        row, who = await _authorized_row(s, dl_id, token, OpsAction.DEAD_LETTER_APPROVE)
        async with pool(s, migrate=True) as p:
            click.echo(await approve_replay(p, row, who.reviewer, reason, lambda: connect(s)))
        return Exit.OK

    return go


@dlq.command()
@click.argument("dl_id", metavar="ID", type=ROW_ID)
@operator_token
def replay(dl_id: int, token: str | None) -> Command:
    """Replay dead letter ID once per approval; never when its receipt says it happened,
    nor while an earlier replay of it may still run (exit 1; asks Temporal, exit 3 when it
    does not answer). Needs a change_owner's, incident_commander's or on_call's token of its
    tenant (exit 1 otherwise, audited; 8 without one); an ID with no dead letter is refused
    the same way, as every tenant's."""

    async def go(s: Settings) -> int:
        from policies.authority import OpsAction
        from tollgate.ops.actions import replay_dead_letter

        row, who = await _authorized_row(s, dl_id, token, OpsAction.DEAD_LETTER_REPLAY)
        async with pool(s, migrate=True) as p:
            code, line = await replay_dead_letter(p, row, who.reviewer, lambda: connect(s),
                                                  s.task_queue)
        click.echo(line)
        return code

    return go


def _some_reason(ctx: click.Context, param: click.Parameter, value: str) -> str:
    if not value.strip():
        raise click.BadParameter("say why (recorded)", ctx=ctx, param=param)
    return value


@dlq.command()
@click.argument("dl_id", metavar="ID", type=ROW_ID)
@click.option("--reason", required=True, type=TEXT, callback=_some_reason,
              help="why it is never replayed: refused for good, settled by hand at the "
              "target, the customer reached otherwise (recorded)")
@operator_token
def close(dl_id: int, reason: str, token: str | None) -> Command:
    """Close dead letter ID for good: never approved or replayed again; its write, if any,
    stays unknown, taken off the books (ops status counts it closed by hand, the sweep leaves
    it). Exit 0 when it was closed already (one line); 1 while a replay of it may still run
    (asks Temporal, exit 3 when it does not answer). Needs a change_owner's or
    incident_commander's token of its tenant (exit 1 otherwise, audited; 8 without one); an
    ID with no dead letter is refused the same way, as every tenant's."""

    async def go(s: Settings) -> int:
        from policies.authority import OpsAction
        from tollgate.ops.dead_letter_close import close_dead_letter

        row, who = await _authorized_row(s, dl_id, token, OpsAction.DEAD_LETTER_CLOSE)
        async with pool(s, migrate=True) as p:
            code, line = await close_dead_letter(p, row, who.reviewer, reason,
                                                 lambda: connect(s))
        click.echo(line)
        return code

    return go
