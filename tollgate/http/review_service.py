"""What the review API and the web inbox both do: list, show and decide, for one identity.

The tenant and roles always come from the verified token. Reading another tenant's review
answers 404 (its existence is not confirmed); a decision on one still reaches the workflow,
which refuses it ``cross_tenant`` and records the attempt.
"""

from __future__ import annotations

import contextlib
import re
from datetime import UTC, datetime
from typing import Any, Literal

from fastapi import HTTPException
from pydantic import BaseModel, ConfigDict, Field, field_validator

from adapters.postgres.store import PostgresStore
from contracts import ReviewDecision, ReviewTicket
from contracts.base import ID_PATTERN
from contracts.triage import Assignment
from tollgate.http.deps import Services
from tollgate.http.review_evidence import evidence_fields
from tollgate.ops.review_ticket import (
    DECISION_TIMEOUT,
    FINISHED_QUERY_TIMEOUT,
    QUERY_TIMEOUT,
    DecisionNotTaken,
    deliver_decision,
    how_it_ended,
    open_end,
)
from tollgate.runtime.identity import Identity

#: What a workflow id of this project can look like (``event/{tenant}/{key}``,
#: ``quarantine/{hash}``); anything else cannot be a review, so it is not looked up.
_WORKFLOW_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/-]{0,299}")


def known_shape(workflow_id: str) -> None:
    """404 for an id no review can have, before it reaches PostgreSQL or Temporal (a NUL
    would be a 500 there)."""
    if not _WORKFLOW_ID.fullmatch(workflow_id):
        raise HTTPException(404, "no such review")


class ReviewSummary(BaseModel):
    workflow_id: str
    event_type: str | None
    waiting_since: datetime
    review_due_at: datetime | None
    #: The open review's ticket from the listing (``TollgateReviewTicket``): a decision may name
    #: these without reading the review first. None for a run from before the attribute.
    request_id: str | None = None
    draft_version: int | None = None


class DecisionIn(BaseModel):
    #: Strict: a decision is taken as sent or refused (422 naming the field), never coerced
    #: (``"draft_version": true`` was version 1); an unknown field is refused, not ignored (a
    #: misspelt ``"rol"`` decided in the token's default role).
    model_config = ConfigDict(strict=True, extra="forbid")

    decision: Literal["approve", "reject", "request_info"]
    reason: str = Field(min_length=1, max_length=1000)
    request_id: str = Field(min_length=1, max_length=100)
    draft_version: int = Field(ge=0, le=1_000_000)
    #: Which of the token's roles the decision is made in (the inbox page sends the one the
    #: review needs); without it, the token's only role, or the one the review needs.
    role: str | None = Field(default=None, min_length=1, max_length=100)

    @field_validator("reason", "request_id", "role")
    @classmethod
    def _edge_text(cls, value: str | None, info: Any) -> str | None:
        """NUL, lone surrogates and control characters are refused before the decision is
        accepted: accepted, it could never be recorded (issue 25)."""
        from policies.edge_text import check_string

        if value is None:
            return None
        bad = check_string(value, f"$.{info.field_name}", free_text=info.field_name == "reason")
        if bad is not None:
            raise ValueError(f"{bad.rule}: {bad.message}")
        return value


class DecisionOut(BaseModel):
    accepted: bool
    state: str
    message: str
    reason_code: str | None = None


async def list_reviews(svc: Services, who: Identity) -> list[ReviewSummary]:
    """The identity's tenant's open reviews, nearest SLA first."""
    from tollgate.ops.review_ticket import REVIEW_QUEUE, listed_ticket
    from workflows.search_attributes import EVENT_TYPE, REVIEW_DUE

    if not re.fullmatch(ID_PATTERN, who.tenant):  # it goes into the query text
        raise HTTPException(403, "the token's tenant is not a valid tenant id")
    client = await svc.temporal.client()
    query = f"{REVIEW_QUEUE} AND TollgateTenant = '{who.tenant}'"
    rows = []
    async for wf in client.list_workflows(query):
        attrs, listed = wf.typed_search_attributes, listed_ticket(wf)
        rows.append(ReviewSummary(workflow_id=wf.id, event_type=attrs.get(EVENT_TYPE),
                                  waiting_since=wf.start_time,
                                  review_due_at=attrs.get(REVIEW_DUE),
                                  request_id=listed.request_id if listed else None,
                                  draft_version=listed.draft_version if listed else None))
    far = datetime.max.replace(tzinfo=UTC)
    return sorted(rows, key=lambda r: (r.review_due_at or far, r.workflow_id))


async def ticket(svc: Services, workflow_id: str, *, running: bool = True
                 ) -> ReviewTicket | None:
    """The run's ``review_ticket``, None when nobody answers; a finished run (``running``
    False) is asked with ``FINISHED_QUERY_TIMEOUT``: its record is PostgreSQL's."""
    from temporalio.service import RPCError

    client = await svc.temporal.client()
    try:
        return await client.get_workflow_handle(workflow_id).query(
            "review_ticket", result_type=ReviewTicket,
            rpc_timeout=QUERY_TIMEOUT if running else FINISHED_QUERY_TIMEOUT)
    except RPCError:
        return None


async def review_detail(svc: Services, who: Identity, workflow_id: str) -> dict[str, Any]:
    """Draft, sources, unknowns, risk, validator flags, policy version and earlier decisions."""
    known_shape(workflow_id)
    record = await PostgresStore(svc.pool).review_record(workflow_id)
    if record is None or record.event["tenant_id"] != who.tenant:
        raise HTTPException(404, "no such review for your tenant")
    from temporalio.service import RPCError

    # A run that closed with no outcome (terminated by hand, failed) has no review to decide,
    # and its query would wait for a worker to replay it; with Temporal gone since the client
    # connected, how it stands is unknown. Either way the record is PostgreSQL's.
    client = await svc.temporal.client()
    try:
        run = await how_it_ended(client.get_workflow_handle(workflow_id))
        ended, running = run.ended, run.running
    except RPCError:
        ended, running = None, True
    found = None if ended else await ticket(svc, workflow_id, running=running)
    draft_row = record.draft or {}
    draft = found.draft.model_dump() if found and found.draft else draft_row.get("draft") or {}
    state = found.state.value if found else record.event["state"]
    return {
        "workflow_id": workflow_id, "tenant_id": record.event["tenant_id"],
        "event_type": record.event["event_type"],
        "state": state, "reason_code": record.event["reason_code"],
        # Once PostgreSQL holds the end (ops close's STOPPED), that end is the answer, as the
        # CLI says it: not "no outcome" beside it.
        "run_ended": open_end(state, ended),
        "request_id": found.request_id if found else None,
        "draft_version": (found.draft_version if found else None) or draft_row.get("version"),
        "draft": draft.get("message"), "sources": draft.get("source_refs") or [],
        # A triage event's draft is the helpdesk assignment: spelled out for the page.
        "assignment": _assignment(draft.get("message")),
        "unknowns": draft.get("unknowns") or [], "why": draft.get("reason") or None,
        "risk": found.risk if found else None,
        "required_roles": found.required_roles if found else [],
        "validator_flags": draft_row.get("findings") or [],
        "policy_version": (found.policy_version if found else None)
        or record.event["policy_version"],
        "review_due_at": found.review_due_at if found else record.event["review_due_at"],
        "review_deadline": found.review_deadline if found else None,
        "decisions": [{k: d[k] for k in ("at", "decision", "reviewer", "role", "reason",
                                         "draft_version", "accepted", "refusal_code")}
                      for d in record.decisions],
        **evidence_fields(found, draft_row, draft.get("message")),
    }


async def decide(svc: Services, who: Identity, workflow_id: str, body: DecisionIn
                 ) -> DecisionOut:
    """Send the decision as the ``review`` update; the workflow judges it (SoD, roles, tenant,
    request id and draft version) and says why when it refuses.

    The body names the review (from the page, the review's detail or the listing's ticket), so
    no ``review_ticket`` query precedes the update: one message to the workflow (issue 33). A
    stale name is the validator's to refuse, as before.
    """
    from temporalio.client import WorkflowExecutionStatus, WorkflowUpdateFailedError
    from temporalio.exceptions import ApplicationError
    from temporalio.service import RPCError

    known_shape(workflow_id)
    client = await svc.temporal.client()
    handle = client.get_workflow_handle(workflow_id)
    try:
        running = (await handle.describe()).status == WorkflowExecutionStatus.RUNNING
    except RPCError:
        raise HTTPException(404, "no such review") from None
    decision = ReviewDecision(
        request_id=body.request_id, decision=body.decision, reviewer=who.reviewer,
        role=await _role(svc, who, workflow_id, body) if running else who.roles[0],
        reason=body.reason, draft_version=body.draft_version, tenant_id=who.tenant,
        token=who.token)
    try:
        ack = await deliver_decision(handle, decision, DECISION_TIMEOUT) if running else None
    except WorkflowUpdateFailedError as exc:  # the update validator refused it
        if not isinstance(exc.cause, ApplicationError):
            raise
        from tollgate.ops.refusals import record_validator_refusal

        await record_validator_refusal(svc.pool, workflow_id, decision,
                                       exc.cause.type or "refused")
        return DecisionOut(accepted=False, state="AWAITING_REVIEW", message=exc.cause.message,
                           reason_code=exc.cause.type)
    except DecisionNotTaken:
        raise HTTPException(503, "no worker took the decision in time; read the review "
                            "again before deciding again") from None
    except RPCError:
        # Finished since the describe: the decision is recorded as undelivered below.
        if (await handle.describe()).status == WorkflowExecutionStatus.RUNNING:
            raise
        ack = None
    if ack is None:
        code = await PostgresStore(svc.pool).record_undelivered_decision(
            workflow_id=workflow_id, decision=decision,
            decision_key=f"{workflow_id}#h{body.request_id[:40]}:{who.reviewer}")
        return DecisionOut(accepted=False, state="CLOSED", reason_code=code or "review_closed",
                           message="the review has finished; the decision changes nothing")
    if ack.accepted:
        await wake_gate(client, who.tenant)
    return DecisionOut(accepted=ack.accepted, state=ack.state.value, message=ack.message,
                       reason_code=ack.reason_code)


async def _role(svc: Services, who: Identity, workflow_id: str, body: DecisionIn) -> str:
    """The role the decision is made in. Only a token with several roles and a body that names
    none needs the review's required roles, so only then is the workflow asked for them."""
    if body.role is not None:
        return body.role  # not one of the token's: the validator refuses role_not_in_token
    if len(who.roles) == 1:
        return who.roles[0]
    found = await ticket(svc, workflow_id)
    return who.role_for(found.required_roles if found else [])


async def wake_gate(client: Any, tenant: str) -> None:
    """A decided review may clear its tenant's backlog: the runs the gate holds look again now
    rather than on their timer. Best effort: a lost wake-up costs only that wait."""
    from temporalio.service import RPCError

    from contracts.search_attributes import gate_key
    from tollgate.ops.wake import wake_held

    # Visibility unavailable: the held runs' fallback timers still release them.
    with contextlib.suppress(RPCError):
        await wake_held(client, gate_key(tenant))


def _assignment(message: str | None) -> dict[str, Any] | None:
    found = Assignment.read(message)
    return found.model_dump() if found else None
