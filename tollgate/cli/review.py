"""`tollgate review`: list, show and decide.

A decision names what the reviewer was shown: ``--seen vN:REQUEST`` (printed by ``review show``)
carries the draft version and the review request, and the workflow refuses it when a newer draft
or another request has come since (``stale_draft_version``, ``wrong_request``). A decision for an
event whose workflow has already finished never reaches it, so it is recorded here as refused
(``review_closed``, or ``cross_tenant``): every decision leaves a row.

The role is whatever ``--role`` claims and the tenant whatever ``--tenant`` says, unless
``--token`` (or ``TOLLGATE_TOKEN``) gives an access token: then the reviewer, role and tenant
are the token's (docs/api.md).
"""

from __future__ import annotations

import re
import uuid
from typing import TYPE_CHECKING

import click

from tollgate.cli.common import ID_TEXT, TEXT, Command, connect, json_option, pool
from tollgate.cli.review_show import review_list, review_show
from tollgate.config.settings import Settings
from tollgate.runtime.exits import Exit, Failure

if TYPE_CHECKING:
    from temporalio.client import Client

    from contracts import ReviewDecision
    from tollgate.http.identity import Identity

DECISIONS = {"approve": "approve", "reject": "reject", "request-info": "request_info"}
HELP = {
    "approve": "Approve the draft of WORKFLOW_ID you were shown; it is sent once approved.",
    "reject": "Reject the draft of WORKFLOW_ID you were shown; nothing is sent.",
    "request-info": "Ask a question about the draft of WORKFLOW_ID you were shown; a new "
                    "draft version answers it and the review starts again.",
}
_SEEN = re.compile(r"v(?P<version>[0-9]{1,9}):(?P<request>[A-Za-z0-9._:-]{1,128})")

__all__ = ["review", "review_decide", "review_list", "review_show"]

token_option = click.option(
    "--token", envvar="TOLLGATE_TOKEN", show_envvar=True,
    help="access token (`tollgate dev token` or your identity provider's): the reviewer, role "
         "and tenant come from it, overriding what the other options claim")


async def identity_of(token: str, s: Settings) -> Identity:
    """The verified identity a token carries, or one line saying why it is refused."""
    from tollgate.http.identity import IdentityError, verifier_from_settings

    try:
        return await verifier_from_settings(s).verify(token.strip())
    except IdentityError as exc:
        raise Failure(Exit.REFUSED, f"token refused: {exc.code}: {exc.message}") from None


@click.group()
def review() -> None:
    """Reviewer: list the queue, show a record, decide."""


@review.command("list")
@click.option("--tenant", help="only this tenant's records")
@token_option
@json_option
def list_cmd(tenant: str | None, token: str | None, as_json: bool) -> Command:
    """Records waiting for review, the nearest SLA first, with age, flags and SLA left."""

    async def go(s: Settings) -> int:
        only = (await identity_of(token, s)).tenant if token else tenant
        return await review_list(await connect(s), tenant=only, as_json=as_json)

    return go


@review.command("show")
@click.argument("workflow_id")
@json_option
def show_cmd(workflow_id: str, as_json: bool) -> Command:
    """Draft, sources, unknowns, risk, policy and every decision of WORKFLOW_ID
    (event/TENANT/KEY), and the --seen token a decision on it must carry."""

    async def go(s: Settings) -> int:
        return await review_show(await connect(s), s, workflow_id, as_json=as_json)

    return go


def _decision_command(name: str, decision: str) -> click.Command:
    @click.command(name)
    @click.argument("workflow_id", type=ID_TEXT)
    @click.option("--seen", required=True, metavar="vN:REQUEST",
                  help="the draft version and review request you were shown, as printed by "
                       "`tollgate review show`")
    @click.option("--reviewer", type=ID_TEXT,
                  help="who decides (a named person); required without --token")
    @click.option("--role", default="reviewer", help="the role the reviewer claims")
    @click.option("--reason", required=True, type=TEXT, help="why; recorded with the decision")
    @click.option("--tenant", type=ID_TEXT,
                  help="the reviewer's tenant; another tenant's event refuses")
    @token_option
    def command(workflow_id: str, seen: str, reviewer: str | None, role: str, reason: str,
                tenant: str | None, token: str | None) -> Command:
        match = _SEEN.fullmatch(seen)
        if match is None:
            raise click.BadParameter("expected vN:REQUEST, as `tollgate review show` prints it",
                                     param_hint="--seen")
        if not token and not reviewer:
            raise click.UsageError("give --token (or TOLLGATE_TOKEN), or --reviewer")

        async def go(s: Settings) -> int:
            who, claimed_role, claimed_tenant = reviewer, role, tenant
            if token:
                ident = await identity_of(token, s)
                who, claimed_role, claimed_tenant = ident.reviewer, ident.roles[0], ident.tenant
            assert who is not None
            return await review_decide(
                await connect(s), s, workflow_id, decision=decision, reviewer=who,
                role=claimed_role, reason=reason, tenant=claimed_tenant,
                draft_version=int(match["version"]), request_id=match["request"])

        return go

    command.help = (f"{HELP[name]} Exit 0 accepted, 1 refused (with the reason).")
    return command


for _name, _decision in DECISIONS.items():
    review.add_command(_decision_command(_name, _decision))


async def review_decide(
    client: Client, s: Settings, workflow_id: str, *, decision: str, reviewer: str,
    role: str, reason: str, tenant: str | None, draft_version: int, request_id: str,
) -> int:
    """Send one decision for the draft version and request the reviewer saw; 0 accepted,
    1 refused (with the reason)."""
    from pydantic import ValidationError
    from temporalio.client import WorkflowExecutionStatus, WorkflowUpdateFailedError
    from temporalio.service import RPCError

    from contracts import ReviewAck, ReviewDecision

    handle = client.get_workflow_handle(workflow_id)
    running = (await handle.describe()).status == WorkflowExecutionStatus.RUNNING
    try:
        made = ReviewDecision(request_id=request_id, decision=decision, reviewer=reviewer,
                              role=role, reason=reason, draft_version=draft_version,
                              tenant_id=tenant)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise Failure(Exit.USAGE, f"invalid decision: {first['loc'][0]}: {first['msg']}") from None
    if running:
        try:
            ack = await handle.execute_update("review", made, result_type=ReviewAck)
        except (WorkflowUpdateFailedError, RPCError) as exc:
            if (await handle.describe()).status == WorkflowExecutionStatus.RUNNING:
                raise Failure(Exit.UNREACHABLE,
                              f"{workflow_id}: decision not delivered: {exc}") from None
        else:
            click.echo("accepted: " + ack.message if ack.accepted
                       else f"refused: {ack.reason_code}: {ack.message}")
            return Exit.OK if ack.accepted else Exit.REFUSED
    return await _record_undelivered(s, workflow_id, made)


async def _record_undelivered(s: Settings, workflow_id: str, made: ReviewDecision) -> int:
    from adapters.postgres.store import PostgresStore

    if not s.dsn:
        click.echo(f"refused: review_closed: {workflow_id} has finished; the decision changes "
                   "nothing (not recorded: PostgreSQL not configured)")
        return Exit.REFUSED
    async with pool(s) as p:
        code = await PostgresStore(p).record_undelivered_decision(
            workflow_id=workflow_id, decision=made,
            decision_key=f"{workflow_id}#u{uuid.uuid4().hex[:16]}")
    click.echo(f"refused: {code or 'review_closed'}: {workflow_id} has finished; the decision "
               "changes nothing" + (" (recorded)" if code else ""))
    return Exit.REFUSED
