"""Who may steer operations, on the operator commands: the roles come from the token
(``--token`` / ``TOLLGATE_TOKEN``), the matrix is ``policies.authority``, and every refusal of a
verified identity is an ``audit`` row (``refused:<action>``) before the command ends with exit 1.

There is no ``--operator``: the name recorded is the token's, so nobody acts under a name they
cannot prove (every operator command answers it with a usage error saying so: ``operator_token``).
A missing or unverifiable token ends the command with exit 8 (nothing to audit: nobody is named).

A command acting on a row by its id checks the token against the row's tenant before anything of
the row is said (``authorized_row``): an id with no row is every tenant's, so a token, always of
one tenant (``tollgate/runtime/claims.py``), cannot tell another tenant's row from none.

The read commands (``ops dlq list|show``, ``ops outbox list|show``, ``ops incident show``,
``trace``, ``ops state``) need no token and no role (ADR 0076): without one they read every
tenant's, as before; with one, any verified identity reads its own tenant's only (``reader``,
``read_scope`` for a listing, ``check_read``/``readable_row`` for one row, refused as
``authorized_row`` refuses: another tenant's row and none alike, audited).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from tollgate.cli.common import identity_of, pool, token_option
from tollgate.cli.params import ID_TEXT
from tollgate.runtime.exits import Exit, Failure

if TYPE_CHECKING:
    import asyncpg

    from policies.authority import AuthorityVerdict, OpsAction, OpsRead
    from tollgate.config.settings import Settings
    from tollgate.runtime.identity import Identity

F = TypeVar("F", bound=Callable[..., Any])
#: How a command reads the row it acts on: the row (with its ``tenant_id``), or None.
ReadRow = Callable[["asyncpg.Pool"], Awaitable["dict[str, Any] | None"]]


async def authorized(s: Settings, token: str | None, action: OpsAction, *, tenant: str,
                     target: str, runbook: dict[str, object] | None = None,
                     by_id: bool = False) -> Identity:
    """The token's identity, if it may take ``action`` on ``tenant``; else the refusal is
    audited against ``target`` and the command ends (exit 1, one line). ``by_id``: the tenant
    came from a row looked up by its id, so a cross-tenant refusal also says the id may be
    none at all (an owner's mistyped id hears that, not only that the tenant is wrong)."""
    from policies.authority import authorize_ops

    who = await identity_of(token, s)
    verdict = authorize_ops(action, who.verified(), tenant=tenant, runbook=runbook)
    if verdict.ok:
        return who
    await _refuse(s, who, action.value, target, verdict, by_id=by_id)


async def _refuse(s: Settings, who: Identity, action: str, target: str,
                  verdict: AuthorityVerdict, *, by_id: bool) -> NoReturn:
    """Audit the refusal of ``who`` (``refused:<action>`` against ``target``), then end the
    command with exit 1 and one line."""
    from adapters.postgres.ops import OpsStore

    code = verdict.reason_code or "refused"
    async with pool(s, migrate=True) as p:
        await OpsStore(p).record_refusal(who.reviewer, action, target, code)
    unseen = ("; that id is none of its own (another tenant's, or none at all)"
              if by_id and code == "cross_tenant" else "")
    raise Failure(Exit.REFUSED, f"refused: {code}: {verdict.message}{unseen}")


async def authorized_row(s: Settings, token: str | None, action: OpsAction, *, read: ReadRow,
                         target: str, missing: str) -> tuple[dict[str, Any], Identity]:
    """The row ``read`` finds and the token's identity, once the token may take ``action`` on
    the row's tenant (else the refusal is audited against ``target`` and the command ends).

    Checked before anything of the row is said: a row that does not exist, or names no tenant,
    is every tenant's ('*', as ``ops close`` treats an id naming no tenant), so a token, always
    of one tenant, is refused alike for another tenant's row and for none, in the same words
    (a refusal names the token's tenant, never the target's), and learns nothing, not even
    whether it exists. Only an identity of every tenant hears ``missing`` (exit 4)."""
    async with pool(s, migrate=True) as p:
        row = await read(p)
    who = await authorized(s, token, action, tenant=str((row or {}).get("tenant_id") or "*"),
                           target=target, by_id=True)
    if row is None:  # only an identity of every tenant ('*', never a token's) gets here
        raise Failure(Exit.NOT_FOUND, missing)
    return row, who


async def reader(s: Settings, token: str | None) -> Identity | None:
    """Who reads, for a read command (ADR 0076): None without a token (as before the token:
    the database URL is the authority); else the token's identity (exit 8 when unverifiable),
    whatever its roles: any verified identity reads its own tenant's rows."""
    return await identity_of(token, s) if token else None


async def check_read(s: Settings, who: Identity | None, what: OpsRead, *, tenant: str | None,
                     target: str) -> None:
    """Refuse ``who`` a row of ``tenant`` (None: a row of no tenant, or none at all, which is
    every tenant's, as ``authorized_row`` treats it) unless it is of the token's tenant: another
    tenant's row and none get one line (exit 1, audited ``refused:<what>`` against
    ``target``), naming the token's tenant, never the row's. Nothing to check without a token."""
    from policies.authority import authorize_read

    if who is None:
        return
    verdict = authorize_read(what, who.verified(), tenant=tenant or "*")
    if not verdict.ok:
        await _refuse(s, who, what.value, target, verdict, by_id=True)


async def readable_row(s: Settings, token: str | None, what: OpsRead, *, read: ReadRow,
                       target: str, missing: str) -> dict[str, Any]:
    """The row ``read`` finds, for a read command: without a token as before (no row is
    ``missing``, exit 4); with one, checked against the row's tenant before anything of it is
    said (``check_read``)."""
    who = await reader(s, token)
    async with pool(s, migrate=True) as p:
        row = await read(p)
    await check_read(s, who, what, tenant=(row or {}).get("tenant_id"), target=target)
    if row is None:  # no token, or one of every tenant ('*', never a token's)
        raise Failure(Exit.NOT_FOUND, missing)
    return row


def read_scope(who: Identity | None, tenant: str | None, *, rows: str) -> str | None:
    """The tenant a read command's listing keeps (None: every tenant's), as ``review list``
    narrows its queue: without a token ``--tenant`` as given; with one, the token's tenant,
    and a ``--tenant`` naming another is refused (exit 1) rather than answered for the
    token's, which would read as "none" for the tenant asked about. ``rows``: what is listed
    ("dead letters")."""
    if who is None:
        return tenant
    mine = who.tenant
    if mine != "*" and tenant not in (None, mine):
        raise Failure(Exit.REFUSED, f"--tenant {tenant}: the token is {mine}'s and lists "
                      f"{mine}'s {rows} only (drop --tenant, or use a token of {tenant})")
    return tenant if mine == "*" else mine


def operator_gone(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    """The hidden ``--operator``'s answer: one line, exit 2, the name given never repeated."""
    if value is not None:
        raise click.UsageError("--operator is gone: the name recorded is the token's (--token "
                               "or TOLLGATE_TOKEN; docs/security.md)", ctx=ctx)


def operator_token(command: F) -> F:
    """``--token`` (or ``TOLLGATE_TOKEN``) for every operator command, with a hidden
    ``--operator``: ``ops close`` and ``ops outbox retry|drop`` once recorded it, and operators
    used to it type it anywhere, so each command answers it with the same line rather than
    Click's bare "No such option". Given without a name too; its value is never read, shown or
    recorded (ID_TEXT, as every text option: a NUL in it is refused first, also unshown)."""
    gone = click.option("--operator", hidden=True, expose_value=False, type=ID_TEXT,
                        is_flag=False, flag_value="", callback=operator_gone)
    return token_option(gone(command))
