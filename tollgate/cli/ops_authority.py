"""Who may steer operations, on the operator commands: the roles come from the token
(``--token`` / ``TOLLGATE_TOKEN``), the matrix is ``policies.authority``, and every refusal of a
verified identity is an ``audit`` row (``refused:<action>``) before the command ends with exit 1.

There is no ``--operator``: the name recorded is the token's, so nobody acts under a name they
cannot prove (every operator command answers it with a usage error saying so: ``operator_token``).
A missing or unverifiable token ends the command with exit 8 (nothing to audit: nobody is named).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from tollgate.cli.common import ID_TEXT, identity_of, pool, token_option
from tollgate.runtime.exits import Exit, Failure

if TYPE_CHECKING:
    from policies.authority import OpsAction
    from tollgate.config.settings import Settings
    from tollgate.runtime.identity import Identity

F = TypeVar("F", bound=Callable[..., Any])


async def authorized(s: Settings, token: str | None, action: OpsAction, *, tenant: str,
                     target: str, runbook: dict[str, object] | None = None) -> Identity:
    """The token's identity, if it may take ``action`` on ``tenant``; else the refusal is
    audited against ``target`` and the command ends (exit 1, one line)."""
    from adapters.postgres.ops import OpsStore
    from policies.authority import authorize_ops

    who = await identity_of(token, s)
    verdict = authorize_ops(action, who.verified(), tenant=tenant, runbook=runbook)
    if verdict.ok:
        return who
    code = verdict.reason_code or "refused"
    async with pool(s, migrate=True) as p:
        await OpsStore(p).record_refusal(who.reviewer, action.value, target, code)
    raise Failure(Exit.REFUSED, f"refused: {code}: {verdict.message}")


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
