"""Who may steer operations, on the operator commands: the roles come from the token
(``--token`` / ``TOLLGATE_TOKEN``), the matrix is ``policies.authority``, and every refusal of a
verified identity is an ``audit`` row (``refused:<action>``) before the command ends with exit 1.

There is no ``--operator``: the name recorded is the token's, so nobody acts under a name they
cannot prove (the commands that once took one answer it with a usage error saying so). A
missing or unverifiable token ends the command with exit 8 (nothing to audit: nobody is named).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from tollgate.cli.common import ID_TEXT, identity_of, pool
from tollgate.runtime.exits import Exit, Failure

if TYPE_CHECKING:
    from policies.authority import OpsAction
    from tollgate.config.settings import Settings
    from tollgate.runtime.identity import Identity


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


def _operator_gone(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    if value is not None:
        raise click.UsageError("--operator is gone: the name recorded is the token's (--token "
                               "or TOLLGATE_TOKEN; docs/security.md)", ctx=ctx)


#: For the commands that once took ``--operator`` (``ops close``, ``ops outbox retry|drop``):
#: a script still passing it gets one line saying where the name comes from now, rather than
#: Click's bare "No such option". Hidden; its value is never read, shown or recorded.
operator_gone = click.option("--operator", hidden=True, expose_value=False, type=ID_TEXT,
                             callback=_operator_gone)
