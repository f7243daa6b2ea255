"""Who may steer operations, on the operator commands: the roles come from the token
(``--token`` / ``TOLLGATE_TOKEN``), the matrix is ``policies.authority``, and every refusal of a
verified identity is an ``audit`` row (``refused:<action>``) before the command ends with exit 1.

There is no ``--operator``: the name recorded is the token's, so nobody acts under a name they
cannot prove (every operator command answers it with a usage error saying so: ``operator_token``).
A missing or unverifiable token ends the command with exit 8 (nothing to audit: nobody is named).

A command acting on a row by its id checks the token against the row's tenant before anything of
the row is said (``authorized_row``): an id with no row is every tenant's, so a token, always of
one tenant (``tollgate/runtime/claims.py``), cannot tell another tenant's row from none.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from tollgate.cli.common import identity_of, pool, token_option
from tollgate.cli.params import ID_TEXT
from tollgate.runtime.exits import Exit, Failure

if TYPE_CHECKING:
    import asyncpg

    from policies.authority import OpsAction
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
    from adapters.postgres.ops import OpsStore
    from policies.authority import authorize_ops

    who = await identity_of(token, s)
    verdict = authorize_ops(action, who.verified(), tenant=tenant, runbook=runbook)
    if verdict.ok:
        return who
    code = verdict.reason_code or "refused"
    async with pool(s, migrate=True) as p:
        await OpsStore(p).record_refusal(who.reviewer, action.value, target, code)
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
