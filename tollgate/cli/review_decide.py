"""`tollgate review approve|reject|request-info`: a reviewer's decision.

A decision names what the reviewer was shown: ``--seen vN:REQUEST`` (printed by ``review show``)
carries the draft version and the review request, and the workflow refuses it when a newer draft
or another request has come since (``stale_draft_version``, ``wrong_request``). A decision for an
event whose workflow has already finished never reaches it, so it is recorded here as refused
(``review_closed``, or ``cross_tenant``): every decision leaves a row.

Every decision needs an access token (``--token`` or ``TOLLGATE_TOKEN``): the reviewer, role and
tenant are the token's, and the workflow's update validator checks the token again, so a client
that talks to Temporal directly cannot decide as someone else (ADR 0026). No token, or one that
proves nothing, ends the command with exit 8; a service or shared account's token is refused.
"""

from __future__ import annotations

import re
import uuid
from datetime import timedelta
from typing import TYPE_CHECKING

import click

from tollgate.cli.common import Command, connect, identity_of, pool, token_option
from tollgate.cli.params import ID_TEXT, TEXT
from tollgate.runtime.exits import Exit, Failure

if TYPE_CHECKING:
    from temporalio.client import Client

    from contracts import ReviewDecision
    from tollgate.config.settings import Settings

DECISIONS = {"approve": "approve", "reject": "reject", "request-info": "request_info"}
HELP = {
    "approve": "Approve the draft of WORKFLOW_ID you were shown; it is sent once approved.",
    "reject": "Reject the draft of WORKFLOW_ID you were shown; nothing is sent.",
    "request-info": "Ask a question about the draft of WORKFLOW_ID you were shown; a new "
                    "draft version answers it and the review starts again.",
}
_SEEN = re.compile(r"v(?P<version>[0-9]{1,9}):(?P<request>[A-Za-z0-9._:-]{1,128})")

__all__ = ["approve", "reject", "request_info", "review_decide"]


def _decision_command(name: str, decision: str) -> click.Command:
    @click.command(name)
    @click.argument("workflow_id", type=ID_TEXT)
    @click.option("--seen", required=True, metavar="vN:REQUEST",
                  help="the draft version and review request you were shown, as printed by "
                       "`tollgate review show`")
    @click.option("--role", type=ID_TEXT,
                  help="which of your token's roles you decide in (default: its first)")
    @click.option("--reason", required=True, type=TEXT, help="why; recorded with the decision")
    @token_option
    def command(workflow_id: str, seen: str, role: str | None, reason: str,
                token: str | None) -> Command:
        match = _SEEN.fullmatch(seen)
        if match is None:
            raise click.BadParameter("expected vN:REQUEST, as `tollgate review show` prints it",
                                     param_hint="--seen")

        async def go(s: Settings) -> int:
            who = await identity_of(token, s)
            if who.service:
                raise Failure(Exit.REFUSED, "refused: service_account: a service or shared "
                              "account cannot decide a review")
            if role is not None and role not in who.roles:
                raise Failure(Exit.REFUSED, f"refused: role_not_in_token: the token does not "
                              f"hold the role '{role}'")
            return await review_decide(
                await connect(s), s, workflow_id, decision=decision, reviewer=who.reviewer,
                role=role or who.roles[0], reason=reason, tenant=who.tenant,
                draft_version=int(match["version"]), request_id=match["request"],
                token=who.token)

        return go

    command.help = (f"{HELP[name]} Exit 0 accepted, 1 refused (with the reason), 8 no "
                    "verified token.")
    return command


approve = _decision_command("approve", DECISIONS["approve"])
reject = _decision_command("reject", DECISIONS["reject"])
request_info = _decision_command("request-info", DECISIONS["request-info"])


async def review_decide(
    client: Client, s: Settings, workflow_id: str, *, decision: str, reviewer: str,
    role: str, reason: str, tenant: str | None, draft_version: int, request_id: str,
    token: str | None = None, patience: timedelta | None = None,
) -> int:
    """Send one decision for the draft version and request the reviewer saw; 0 accepted,
    1 refused (with the reason). No worker taking it within ``patience`` (``DECISION_TIMEOUT``):
    exit 3, one line."""
    from pydantic import ValidationError
    from temporalio.client import WorkflowExecutionStatus, WorkflowUpdateFailedError
    from temporalio.exceptions import ApplicationError
    from temporalio.service import RPCError

    from contracts import ReviewDecision
    from tollgate.ops.review_ticket import DECISION_TIMEOUT, DecisionNotTaken, deliver_decision

    patience = patience or DECISION_TIMEOUT
    handle = client.get_workflow_handle(workflow_id)
    running = (await handle.describe()).status == WorkflowExecutionStatus.RUNNING
    try:
        made = ReviewDecision(request_id=request_id, decision=decision, reviewer=reviewer,
                              role=role, reason=reason, draft_version=draft_version,
                              tenant_id=tenant, token=token)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise Failure(Exit.USAGE, f"invalid decision: {first['loc'][0]}: {first['msg']}") from None
    if running:
        try:
            ack = await deliver_decision(handle, made, patience)
        except DecisionNotTaken:
            raise Failure(Exit.UNREACHABLE,
                          f"{workflow_id}: no worker took the decision within "
                          f"{patience.total_seconds():g} s (it may still be delivered): read "
                          "the review again (`tollgate review show`) before deciding again"
                          ) from None
        except (WorkflowUpdateFailedError, RPCError) as exc:
            cause = exc.cause if isinstance(exc, WorkflowUpdateFailedError) else None
            if isinstance(cause, ApplicationError):  # the update validator said no
                await _audit_refusal(s, workflow_id, made, cause.type or "refused")
                click.echo(f"refused: {cause.type}: {cause.message}")
                return Exit.REFUSED
            if (await handle.describe()).status == WorkflowExecutionStatus.RUNNING:
                raise Failure(Exit.UNREACHABLE,
                              f"{workflow_id}: decision not delivered: {exc}") from None
        else:
            click.echo("accepted: " + ack.message if ack.accepted
                       else f"refused: {ack.reason_code}: {ack.message}")
            if ack.accepted and tenant:
                await _wake_gate(client, tenant)
            return Exit.OK if ack.accepted else Exit.REFUSED
    return await _record_undelivered(s, workflow_id, made)


async def _audit_refusal(s: Settings, workflow_id: str, made: ReviewDecision,
                         code: str) -> None:
    from tollgate.ops.refusals import record_validator_refusal

    if s.dsn:  # without PostgreSQL the refusal is only printed, as for a closed review
        async with pool(s) as p:
            await record_validator_refusal(p, workflow_id, made, code)


async def _wake_gate(client: Client, tenant: str) -> None:
    """A decided review may clear its tenant's backlog: the runs the gate holds look again now,
    not on their timer. Best effort: a lost wake-up costs only that wait."""
    import contextlib

    from temporalio.service import RPCError

    from contracts.search_attributes import gate_key
    from tollgate.ops.wake import wake_held

    with contextlib.suppress(RPCError):
        await wake_held(client, gate_key(tenant))


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
