"""`tollgate ops contacts`: a tenant's own contact points (its hotline, its e-mail address, its
web domain), which the draft validator never counts as foreign (ADR 0039, docs/drafting.md).

Listing needs only PostgreSQL (with a token, of its tenant only: ADR 0076). Adding and removing
need a change_owner's token of the tenant (policies/authority.py); each change is one row the
audit chain records (who, when, why), and a removed point stays listed with `--removed`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

import click

from contracts.base import ID_BODY
from contracts.contacts import CONTACT_KINDS, ContactKind, contact_key
from tollgate.cli.common import Command, json_option, pool
from tollgate.cli.ops_authority import authorized, operator_token, read_scope, reader
from tollgate.cli.output import emit_json, table
from tollgate.cli.params import ID_TEXT, TEXT
from tollgate.runtime.exits import Exit, Failure

if TYPE_CHECKING:
    from tollgate.config.settings import Settings

F = TypeVar("F", bound=Callable[..., Any])


@click.group()
def contacts() -> None:
    """A tenant's own contact points: never flagged as foreign in its drafts."""


def _change_options(command: F) -> F:
    """What a change of a point takes: --tenant, exactly one of --phone / --email / --domain,
    --reason and the operator's --token (listed in that order)."""
    command = operator_token(command)
    command = click.option("--reason", required=True, type=TEXT, help="why (recorded)")(command)
    for kind in reversed(CONTACT_KINDS):
        command = click.option(f"--{kind}", type=TEXT, metavar="VALUE",
                               help=f"the tenant's {kind}")(command)
    return click.option("--tenant", required=True, type=ID_TEXT, help="tenant id")(command)


def _one_tenant(tenant: str) -> None:
    # A point belongs to one tenant: there is no "every tenant" ('*') to list it under.
    if not re.fullmatch(ID_BODY, tenant):
        raise click.BadParameter("not a tenant id", param_hint="'--tenant'")


def _one_point(tenant: str, points: dict[str, str | None]) -> tuple[ContactKind, str]:
    """The one point a change names, of a tenant id that names one tenant."""
    _one_tenant(tenant)
    given = [(kind, value) for kind, value in points.items() if value is not None]
    if len(given) != 1:
        raise click.UsageError("give exactly one of --phone, --email, --domain")
    kind, value = given[0]
    if contact_key(kind, value) is None:  # type: ignore[arg-type]
        raise click.BadParameter(f"not a {kind} a message could name",
                                 param_hint=f"'--{kind}'")
    return kind, value  # type: ignore[return-value]


async def _changed_by(s: Settings, token: str | None, tenant: str) -> str:
    """Who changes TENANT's points: a change_owner of that tenant, from the token."""
    from policies.authority import OpsAction

    who = await authorized(s, token, OpsAction.CONTACTS_CHANGE, tenant=tenant,
                           target=f"contacts/{tenant}")
    return who.reviewer


def _when(at: datetime | None) -> str:
    return "-" if at is None else f"{at:%Y-%m-%d %H:%M}"


@contacts.command("list")
@click.option("--tenant", required=True, type=ID_TEXT, help="tenant id")
@click.option("--removed", is_flag=True, help="also the points removed since (the history)")
@operator_token
@json_option
def list_cmd(tenant: str, removed: bool, token: str | None, as_json: bool) -> Command:
    """The tenant's contact points, oldest first. With --token, of the token's tenant only
    (customer-facing data, ADR 0076): a --tenant naming another is refused, exit 1."""
    _one_tenant(tenant)

    async def go(s: Settings) -> int:
        from adapters.postgres.contacts import ContactStore

        read_scope(await reader(s, token), tenant, rows="contact points")
        async with pool(s, migrate=True) as p:
            rows = await ContactStore(p).rows(tenant, removed=removed)
        if as_json:
            emit_json(rows)
        elif not rows:
            click.echo(f"no contact points for {tenant}: every phone number and e-mail address"
                       " in its drafts is checked against the policy's allowlist only")
        else:
            table(["id", "kind", "value", "added by", "added", "reason", "removed"], [
                (r["id"], r["kind"], r["value"], r["added_by"], _when(r["added_at"]),
                 r["reason"], "-" if r["removed_at"] is None
                 else f"{_when(r['removed_at'])} by {r['removed_by']}") for r in rows])
        return Exit.OK

    return go


@contacts.command()
@_change_options
def add(tenant: str, phone: str | None, email: str | None, domain: str | None, reason: str,
        token: str | None) -> Command:
    """Add a contact point of TENANT (a change_owner's token). Already listed, in any writing
    of the same number or address: nothing changes, exit 0."""
    kind, value = _one_point(tenant, {"phone": phone, "email": email, "domain": domain})

    async def go(s: Settings) -> int:
        from adapters.postgres.contacts import ContactStore
        from contracts.contacts import TenantContact

        actor = await _changed_by(s, token, tenant)
        async with pool(s, migrate=True) as p:
            outcome, row = await ContactStore(p).add(
                tenant, TenantContact(kind=kind, value=value), actor=actor, reason=reason)
        if outcome == "full":
            raise Failure(Exit.REFUSED, f"{tenant} already has {row['live']} contact points, "
                          f"the most a tenant may have: remove one first")
        if outcome == "added":
            click.echo(f"contact point {row['id']} of {tenant}: {kind} {value} added")
        else:
            click.echo(f"{tenant} already lists this {kind} as {row.get('value')} (point "
                       f"{row.get('id')}, added by {row.get('added_by')}): nothing changed")
        return Exit.OK

    return go


@contacts.command()
@_change_options
def remove(tenant: str, phone: str | None, email: str | None, domain: str | None, reason: str,
           token: str | None) -> Command:
    """Remove a contact point of TENANT (a change_owner's token): its drafts that name it are
    flagged again. Exit 4 when TENANT lists no such point."""
    kind, value = _one_point(tenant, {"phone": phone, "email": email, "domain": domain})

    async def go(s: Settings) -> int:
        from adapters.postgres.contacts import ContactStore

        actor = await _changed_by(s, token, tenant)
        async with pool(s, migrate=True) as p:
            row = await ContactStore(p).remove(tenant, kind, value, actor=actor, reason=reason)
        if row is None:
            raise Failure(Exit.NOT_FOUND, f"{tenant} lists no {kind} {value}")
        click.echo(f"contact point {row['id']} of {tenant}: {kind} {row['value']} removed")
        return Exit.OK

    return go
