"""Step 4: ask the drafting port for a proposal and validate it before anyone sees it.

Order matters: the context is scanned first, so a poisoned CRM note never reaches a model; the
answer is validated after, so a bad draft never reaches a reviewer. Outcomes:

    drafted            readable, and no flag the policy stops on; the flags that do not stop
                       (``DraftResult.flags``: rule, span, source) go to the reviewer with it
    failed_validation  a flag the policy's ``stop_flags`` name (every flag under a rule from
                       before 2026-12-01): in the context, the model is not called at all; or
                       the model refused, called a tool or broke the schema; the draft itself
                       is withheld and only a redacted excerpt is kept
    unreadable         the last allowed attempt still could not be read: a reviewer gets the
                       redacted excerpt instead of the record failing
    ApplicationError   anything else (429, timeouts, 5xx, an unreadable answer before the last
                       attempt), raised as the taxonomy and classified for Temporal by
                       ``activities.interceptor``

A refusal and a tool call are readable answers, so they end in ``failed_validation`` (with a
``model_refused`` / ``tool_call`` finding) rather than an activity failure: retrying the same
prompt tends to repeat them, and a person should see why.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol

import structlog
from temporalio import activity

from adapters.models.draft_parsing import (
    DraftSchemaError,
    ModelRefused,
    ToolCallInOutput,
    UnreadableOutput,
)
from adapters.ports.models import DraftProvider, ModelAnswer
from contracts import DraftRequest, DraftResult, Flag
from contracts.drafting import DRAFT_MAX_ATTEMPTS
from contracts.errors import ErrorClass, TollgateError
from policies.draft_validator import inspect_draft, scan_context, stopping
from policies.prompts import build_prompt, prompt_version_for
from policies.sensitive import redact

EXCERPT_CHARS = 500
log = structlog.get_logger("tollgate.draft")


class DraftActivities:
    def __init__(
        self,
        provider: DraftProvider,
        *,
        link_allowlist: frozenset[str] = frozenset(),
        recipient_allowlist: frozenset[str] = frozenset(),
    ) -> None:
        self._provider = provider
        self._links = link_allowlist
        self._recipients = recipient_allowlist

    @activity.defn
    async def draft_message(self, request: DraftRequest) -> DraftResult:
        attempt = activity.info().attempt
        with call_line(log, "draft_message", request, attempt, self._provider) as fields:
            result = await self._draft(request, attempt, fields)
            fields["status"] = result.status
            fields["findings"] = sorted({f.split(":")[0] for f in result.findings})
            return result

    async def _draft(
        self, request: DraftRequest, attempt: int, fields: dict[str, object]
    ) -> DraftResult:
        context = dict(request.context)
        if request.questions():
            # Every question goes to the model again, so every one is scanned again.
            context["review.note"] = "\n".join(request.questions())
        shape = request.rule.output if request.rule else None
        # The tenant's own domains are as good as the allowlist for a link in a context fact;
        # its own points reach the draft's validator on the request (ADR 0039).
        allowlist = {*self._links, *self._recipients, *(shape.allowlist if shape else ()),
                     *(c.key for c in request.tenant_contacts if c.kind == "domain")}
        context_flags = scan_context(context, allowlist=allowlist)
        stops = stopping(context_flags, request.rule)
        if stops:
            fields["error_class"] = ErrorClass.SECURITY_INCIDENT.value
            return self._result(request, "failed_validation", findings=stops,
                                flags=context_flags)
        try:
            answer = await self._provider.propose(build_prompt(request))
        except TollgateError as exc:
            outcome = failed_answer(exc, attempt, fields)
            if outcome is None:
                raise  # retried or final; activities.interceptor maps it for Temporal
            status, found, raw = outcome
            return self._result(request, status, findings=found, raw=raw)
        fields["model"] = answer.model
        flags = context_flags + inspect_draft(
            answer.draft,
            request,
            link_allowlist=self._links,
            recipient_allowlist=self._recipients,
        )
        stops = stopping(flags, request.rule)
        if stops:
            return self._result(request, "failed_validation", stops, answer.raw, answer, flags)
        # Flags that do not stop the event travel with the draft: a person decides on them.
        findings = list(dict.fromkeys(f.finding for f in flags))
        return self._result(request, "drafted", findings, answer=answer, flags=flags)

    def _result(
        self,
        request: DraftRequest,
        status: str,
        findings: list[str] | None = None,
        raw: str | None = None,
        answer: ModelAnswer | None = None,
        flags: list[Flag] | None = None,
    ) -> DraftResult:
        return DraftResult.model_validate(
            {
                "status": status,
                "version": request.version,
                # A draft that failed validation may hold the very secret or link it was
                # stopped for; the reviewer reads the redacted excerpt instead.
                "draft": answer.draft if answer and status == "drafted" else None,
                "provider": self._provider.name,
                "model": answer.model if answer else self._provider.model,
                "prompt_version": prompt_version_for(request.ref.event_type),
                "findings": findings or [],
                "raw_excerpt": excerpt(raw) if raw is not None else None,
                "flags": flags or [],
            }
        )


class _Named(Protocol):
    name: str
    model: str


@contextmanager
def call_line(logger: Any, event: str, request: DraftRequest, attempt: int,
              provider: _Named) -> Iterator[dict[str, object]]:
    """One canonical log line per call of an activity that asks a model for a proposal (draft,
    triage): ids, provider, outcome codes, whatever the call ends in. Never the message, the
    prompt or a context value. Yields the fields the call adds to it (``status`` starts as
    ``error``; a ``model`` set there names the model that answered)."""
    started = time.monotonic()
    fields: dict[str, object] = {"status": "error"}
    try:
        yield fields
    finally:
        logger.info(
            event,
            workflow_id=request.ref.workflow_id,
            tenant_id=request.ref.tenant_id,
            event_id=request.ref.event_id,
            draft_version=request.version,
            attempt=attempt,
            provider=provider.name,
            model=fields.pop("model", provider.model),
            duration_ms=round((time.monotonic() - started) * 1000),
            **fields,
        )


def failed_answer(exc: TollgateError, attempt: int,
                  fields: dict[str, object]) -> tuple[str, list[str], str] | None:
    """What a model call that raised ``exc`` ends as (draft, triage): the status, findings and
    raw text of the result, or None when ``exc`` is to be raised. A refusal, a tool call or a
    broken schema is a readable answer: ``failed_validation``; an unreadable one on the last
    allowed attempt, ``unreadable``; anything else is raised (an unreadable answer before the
    last attempt is retried). The error's class and code go into the call's log ``fields``."""
    fields.update(error_class=exc.error_class.value, error_code=exc.code)
    if isinstance(exc, (ModelRefused, ToolCallInOutput, DraftSchemaError)):
        found = exc.findings if isinstance(exc, DraftSchemaError) else [exc.code]
        return "failed_validation", found, exc.raw
    if isinstance(exc, UnreadableOutput) and attempt >= DRAFT_MAX_ATTEMPTS:
        return "unreadable", [exc.code], exc.raw
    return None


def excerpt(raw: str) -> str:
    """Redact first, then cut: cutting first could split a secret and hide it from the rules."""
    text = redact(raw)
    return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 1] + "…"
