"""`tollgate ops rollout` / `ops modes`: the rollout mode of a tenant and adapter (docs/rollout.md).

Every change is audited. A move into a mode that sends real events (canary, assisted) needs a
passing `tollgate certify` of the policy release and code running now.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from contracts.rollout import CERTIFIED_MODES, RolloutMode
from tollgate.cli.common import Command, json_option, pool
from tollgate.cli.ops_authority import authorized, operator_token, read_scope, reader
from tollgate.cli.output import emit_json, table
from tollgate.cli.params import COUNT, ID_TEXT, TEXT
from tollgate.runtime.exits import Exit, Failure

if TYPE_CHECKING:
    from tollgate.config.settings import Settings


@click.command()
@click.option("--tenant", required=True, type=ID_TEXT, help="tenant id, or * for every tenant")
@click.option("--adapter", default="*", type=ID_TEXT, help="adapter name, or * for all")
@click.option("--to", "mode", required=True, type=click.Choice([m.value for m in RolloutMode]),
              help="the new mode")
@click.option("--reason", required=True, type=TEXT, help="why (recorded)")
@click.option("--canary", type=COUNT, metavar="N",
              help="canary: N actions send, then the rest stay in shadow until confirmed")
@click.option("--percent", type=click.IntRange(1, 100), metavar="P",
              help="canary: only about P%% of action keys are eligible to send")
@operator_token
def rollout(tenant: str, adapter: str, mode: str, reason: str, canary: int | None,
            percent: int | None, token: str | None) -> Command:
    """Put TENANT/ADAPTER in a rollout mode (fixture, shadow, canary, assisted). Needs a
    change_owner's token of TENANT (of every tenant for *)."""
    target = RolloutMode(mode)
    if target == RolloutMode.CANARY and canary is None:
        raise click.UsageError("--to canary needs --canary N (how many actions may send)")
    if target != RolloutMode.CANARY and (canary is not None or percent is not None):
        raise click.UsageError("--canary and --percent only go with --to canary")

    async def go(s: Settings) -> int:
        from adapters.postgres.rollout import RolloutStore
        from policies.authority import OpsAction
        from tollgate.ops.certify import catalogue_digest, catalogue_nodes
        from tollgate.ops.release_identity import code_commit, package_version, policy_version

        who = await authorized(s, token, OpsAction.ROLLOUT_CHANGE, tenant=tenant,
                               target=f"rollout/{adapter}/{tenant}")
        async with pool(s, migrate=True) as p:
            store = RolloutStore(p)
            if target in CERTIFIED_MODES:
                version, commit = policy_version(), code_commit()
                digest = catalogue_digest(catalogue_nodes())
                if commit == "unknown":
                    raise Failure(Exit.REFUSED, (
                        f"{adapter}/{tenant}: refusing {target.value}: tollgate"
                        f" {package_version()} does not know its commit (built without"
                        " TOLLGATE_COMMIT outside a git checkout); rebuild it with the commit"))
                if await store.certified(version, commit, digest) is None:
                    raise Failure(Exit.REFUSED, (
                        f"{adapter}/{tenant}: refusing {target.value}: no passing certification"
                        f" for policy {version} at commit {commit[:12]} (tollgate"
                        f" {package_version()}); run `tollgate certify` first"))
            current = await store.mode_of(tenant, adapter)
            await store.set_mode(tenant_id=tenant, adapter=adapter, mode=target, actor=who.reviewer,
                                 reason=reason, canary=canary, percent=percent,
                                 previous=current["mode"] if current else None)
        click.echo(f"rollout {adapter}/{tenant}: {target.value}"
                   + (f" (canary of {canary})" if canary else ""))
        return Exit.OK

    return go


@click.command()
@operator_token
@json_option
def modes(token: str | None, as_json: bool) -> Command:
    """List the rollout mode rows (no row: assisted). With --token, those covering the token's
    tenant: its own and the global ones ('*'), which set its mode too (ADR 0076)."""

    async def go(s: Settings) -> int:
        from adapters.postgres.rollout import RolloutStore

        only = read_scope(await reader(s, token), None, rows="rollout modes")
        async with pool(s, migrate=True) as p:
            rows = await RolloutStore(p).modes(only)
        if as_json:
            emit_json(rows)
        elif not rows:
            click.echo(f"no rollout rows for {only}: it is assisted" if only
                       else "no rollout rows: every tenant is assisted")
        else:
            table(["tenant/adapter", "mode", "canary left", "percent", "reason", "by", "at"], [
                (f"{r['tenant_id']}/{r['adapter']}", r["mode"],
                 "-" if r["canary_remaining"] is None else r["canary_remaining"],
                 "-" if r["canary_percent"] is None else r["canary_percent"], r["reason"],
                 r["changed_by"], f"{r['changed_at']:%Y-%m-%d %H:%M}") for r in rows])
        return Exit.OK

    return go
