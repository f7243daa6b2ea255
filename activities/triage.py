"""Step 4 of a triage event (issue 32, ADR 0044): ask the triage port for a proposal and
validate it before anyone sees it, in the order and with the outcomes of the draft activity
(``activities/draft.py``): the context is scanned first, so a poisoned message never reaches a
model; the proposal is validated after (``policies/triage.py``), so a route off the list or an
unknown ref never reaches a reviewer or the helpdesk.

A clean proposal comes back ``drafted`` with ``triage`` set and ``draft`` holding the
assignment it asks for (canonical JSON: what the reviewer or the policy approves and the send
step sends). A refused one comes back ``failed_validation`` with its findings and no draft.
"""

from __future__ import annotations

import structlog
from temporalio import activity

from activities.draft import call_line, excerpt, failed_answer
from adapters.ports.models import TriageAnswer, TriageProvider
from contracts import DraftRequest, DraftResult, Flag
from contracts.errors import ErrorClass, TollgateError
from policies.draft_validator import scan_context
from policies.triage import (
    TICKET_REF,
    assignment_draft,
    body_fits,
    inspect_triage,
    stopping_triage,
)
from policies.triage_prompt import TRIAGE_PROMPT_VERSION, build_triage_prompt

log = structlog.get_logger("tollgate.triage")


class TriageActivities:
    def __init__(self, provider: TriageProvider) -> None:
        self._provider = provider

    @activity.defn
    async def triage_message(self, request: DraftRequest) -> DraftResult:
        attempt = activity.info().attempt
        # Never the message or a reply in it: the intent and route are codes from the rule.
        with call_line(log, "triage_message", request, attempt, self._provider) as fields:
            result = await self._triage(request, attempt, fields)
            fields["status"] = result.status
            fields["findings"] = sorted({f.split(":")[0] for f in result.findings})
            if result.triage is not None:
                fields.update(intent=result.triage.intent.value, route=result.triage.route.value)
            return result

    async def _triage(self, request: DraftRequest, attempt: int,
                      fields: dict[str, object]) -> DraftResult:
        # The ticket's id is the producer system's identifier (the schema holds it to the id
        # pattern): the assignment needs it, the model does not, and a long id would read as a
        # token to the secret rules. So it is neither scanned nor shown to the model.
        facts = {k: v for k, v in request.context.items() if k != TICKET_REF}
        context = dict(facts)
        if request.questions():
            # Every question goes to the model again, so every one is scanned again.
            context["review.note"] = "\n".join(request.questions())
        shape = request.rule.output if request.rule else None
        # The tenant's own domains are as good as the allowlist (ADR 0039), as for a draft.
        allowlist = {*(shape.allowlist if shape else ()),
                     *(c.key for c in request.tenant_contacts if c.kind == "domain")}
        context_flags = scan_context(context, allowlist=allowlist)
        stops = stopping_triage(context_flags, request.rule)
        if stops:
            fields["error_class"] = ErrorClass.SECURITY_INCIDENT.value
            return self._result(request, "failed_validation", stops, flags=context_flags)
        try:
            answer = await self._provider.triage(
                build_triage_prompt(request.model_copy(update={"context": facts})))
        except TollgateError as exc:
            outcome = failed_answer(exc, attempt, fields)
            if outcome is None:
                raise  # retried or final; activities.interceptor maps it for Temporal
            status, found, raw = outcome
            return self._result(request, status, found, raw=raw)
        fields["model"] = answer.model
        flags = context_flags + inspect_triage(answer.proposal, request)
        stops = stopping_triage(flags, request.rule)
        if not stops and not body_fits(answer.proposal, request.context):
            stops = ["too_long"]
        if stops:
            return self._result(request, "failed_validation", stops, answer.raw, answer, flags)
        findings = list(dict.fromkeys(f.finding for f in flags))
        return self._result(request, "drafted", findings, answer=answer, flags=flags)

    def _result(self, request: DraftRequest, status: str, findings: list[str],
                raw: str | None = None, answer: TriageAnswer | None = None,
                flags: list[Flag] | None = None) -> DraftResult:
        # A refused proposal may hold what it was refused for: only the redacted excerpt is
        # kept, as for a draft.
        proposal = answer.proposal if answer is not None and status == "drafted" else None
        return DraftResult.model_validate({
            "status": status,
            "version": request.version,
            "draft": assignment_draft(proposal, request.context) if proposal else None,
            "triage": proposal,
            "provider": self._provider.name,
            "model": answer.model if answer else self._provider.model,
            "prompt_version": TRIAGE_PROMPT_VERSION,
            "findings": findings,
            "raw_excerpt": excerpt(raw) if raw is not None else None,
            "flags": flags or [],
        })
