"""`tollgate ops incident`: a postmortem draft from the window's redacted evidence (ADR 0046),
shown as markdown or JSON, and marked reviewed by an owner. PostgreSQL and the model only, so
it works while Temporal is down, which is when an incident is being written up.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import click

from tollgate.cli.common import Command, json_option, pool
from tollgate.cli.ops_authority import (
    authorized_row,
    operator_token,
    read_scope,
    readable_row,
    reader,
)
from tollgate.cli.output import emit_json
from tollgate.cli.params import ID_TEXT, ROW_ID
from tollgate.runtime.exits import Exit, Failure

if TYPE_CHECKING:
    from tollgate.config.settings import Settings

_AGO = re.compile(r"(\d{1,5})([mhd])")
_UNITS = {"m": "minutes", "h": "hours", "d": "days"}
#: How far back a window may reach: a packet is a summary, not an export.
MAX_WINDOW = timedelta(days=31)


class When(click.ParamType):
    """A moment: an ISO 8601 date-time (UTC when it names no offset) or an age (``90m``,
    ``6h``, ``2d``). Checked as text at the edge first, then parsed; either failure is a usage
    error naming the option (exit 2)."""

    name = "when"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None
                ) -> datetime:
        if isinstance(value, datetime):
            return value
        text = ID_TEXT.convert(value, param, ctx).strip()
        ago = _AGO.fullmatch(text)
        if ago:
            return datetime.now(UTC) - timedelta(**{_UNITS[ago[2]]: int(ago[1])})
        try:
            moment = datetime.fromisoformat(text)
            # In UTC, as PostgreSQL reads it: year 1 at +14:00 is before year 1 there (asyncpg's
            # DataError, exit 9); an age or offset past year 1 or 9999 is refused here.
            return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC)
        except (ValueError, OverflowError):
            self.fail("not an ISO 8601 date-time (years 1 to 9999, in UTC) or an age like 6h",
                      param, ctx)


WHEN = When()


def _window(since: datetime | None, until: datetime | None) -> tuple[datetime, datetime]:
    if since is None:
        raise click.UsageError("--since is required (an ISO date-time or an age like 6h)")
    end = until or datetime.now(UTC)
    if end <= since:
        raise click.UsageError("--until must be after --since")
    if end - since > MAX_WINDOW:
        raise click.UsageError(f"the window may span {MAX_WINDOW.days} days at most")
    return since, end


#: Where the group leaves a --token given before its subcommand (``ctx.meta`` is shared).
_GIVEN_BEFORE = "tollgate.ops_incident.given_before"


@click.group(invoke_without_command=True)
@click.option("--since", type=WHEN, help="start of the window: ISO date-time or age (6h, 2d)")
@click.option("--until", type=WHEN, help="end of the window (default: now)")
@click.option("--tenant", type=ID_TEXT, help="one tenant's evidence (default: every tenant)")
@operator_token
@json_option
@click.pass_context
def incident(ctx: click.Context, since: datetime | None, until: datetime | None,
             tenant: str | None, token: str | None, as_json: bool) -> Command | None:
    """Draft a postmortem from the window's redacted evidence (dead letters, unknown writes,
    circuit closures, kill switches, quarantines, refused drafts, replays); keep it when every
    sentence rests on the packet (exit 1 otherwise, nothing kept). With --token, of the
    token's tenant's evidence only (ADR 0076): a --tenant naming another is refused, exit 1."""
    if ctx.invoked_subcommand is not None:
        # `ops incident --token T show ID`: the token given before the subcommand is the
        # subcommand's too (one given after it wins), never dropped for an unscoped read.
        ctx.meta[_GIVEN_BEFORE] = token
        return None
    start, end = _window(since, until)

    async def go(s: Settings) -> int:
        from tollgate.ops.incident import draft_incident
        from tollgate.runtime.models import close_providers, postmortem_provider

        only = read_scope(await reader(s, token), tenant, rows="incident evidence")
        provider = postmortem_provider(s.models.draft())
        try:
            async with pool(s, migrate=True) as p:
                done = await draft_incident(p, provider, since=start, until=end, tenant=only)
        finally:
            await close_providers(provider)
        if as_json:
            emit_json({"id": done.id, "new": done.new, "packet_hash": done.packet_hash,
                       "packet": done.packet.model_dump(mode="json"),
                       "draft": done.postmortem.model_dump(mode="json")})
        else:
            total = next(i for i in done.packet.items if i.kind == "totals")
            click.echo(f"incident draft {done.id} {'kept' if done.new else 'already kept'}: "
                       f"{total.figures['failures']} failure(s) in the packet, sha256 "
                       f"{done.packet_hash[:12]}; `tollgate ops incident show {done.id}`")
        return Exit.OK

    return go


@incident.command()
@click.argument("draft_id", metavar="ID", type=ROW_ID)
@operator_token
@json_option
@click.pass_context
def show(ctx: click.Context, draft_id: int, token: str | None, as_json: bool) -> Command:
    """One incident draft as markdown (or JSON with its packet): each sentence with its refs,
    whether the packet still matches its hash, and who reviewed it. With --token, a draft of
    the token's tenant only: another tenant's ID, a draft of every tenant and an ID with no
    draft are refused alike (exit 1, audited)."""

    token = token or ctx.meta.get(_GIVEN_BEFORE)

    async def go(s: Settings) -> int:
        from adapters.postgres.incident import IncidentStore
        from policies.authority import OpsRead
        from tollgate.ops.incident import check_stored, markdown

        row = await readable_row(s, token, OpsRead.INCIDENT_READ,
                                 read=lambda p: IncidentStore(p).draft(draft_id),
                                 target=f"incident/{draft_id}",
                                 missing=f"no incident draft {draft_id}")
        if as_json:
            intact, findings = check_stored(row)
            emit_json({**row, "packet_intact": intact,
                       "findings": [f.model_dump() for f in findings]})
        else:
            click.echo(markdown(row))
        return Exit.OK

    return go


@incident.command()
@click.argument("draft_id", metavar="ID", type=ROW_ID)
@operator_token
@click.pass_context
def review(ctx: click.Context, draft_id: int, token: str | None) -> Command:
    """Mark incident draft ID reviewed (exit 1 when it was already, or its packet no longer
    matches its hash). Needs a change_owner's or incident_commander's token of its tenant
    (exit 1 otherwise, audited; 8 without one); an ID with no draft is refused the same way,
    as every tenant's (a draft of every tenant is refused to every token)."""

    token = token or ctx.meta.get(_GIVEN_BEFORE)

    async def go(s: Settings) -> int:
        from adapters.postgres.incident import IncidentStore
        from policies.authority import OpsAction
        from tollgate.ops.incident import check_stored

        row, who = await authorized_row(s, token, OpsAction.INCIDENT_REVIEW,
                                        read=lambda p: IncidentStore(p).draft(draft_id),
                                        target=f"incident/{draft_id}",
                                        missing=f"no incident draft {draft_id}")
        intact, findings = check_stored(row)
        if not intact or findings:
            raise Failure(Exit.REFUSED, f"incident draft {draft_id} no longer matches its "
                          "packet: build a new one with `tollgate ops incident --since ...`")
        async with pool(s, migrate=True) as p:
            done = await IncidentStore(p).mark_reviewed(draft_id, actor=who.reviewer,
                                                        packet_hash=row["packet_hash"])
        if not done:
            raise Failure(Exit.REFUSED, f"incident draft {draft_id} was reviewed already")
        click.echo(f"incident draft {draft_id} marked reviewed by {who.reviewer}")
        return Exit.OK

    return go
