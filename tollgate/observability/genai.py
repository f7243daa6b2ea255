"""Model calls as OpenTelemetry GenAI client spans (docs/tracing.md, "Model calls").

A ``TracedDraftProvider`` wraps whichever drafter the worker runs and is itself a
``DraftProvider`` (``TracedTriageProvider`` and ``TracedTagProvider`` likewise for the triage
and tagging models): the activities call the ports as before and never learn about tracing,
and the adapters stay free of OpenTelemetry. ``tollgate.runtime.models`` and ``tag_models`` put
them in place only when tracing is on, so off costs nothing. The span sits inside the activity's
``RunActivity:…`` span (which temporalio's interceptor makes current); it is the call's only
HTTP-level record, as the SDKs send through ``httpx2``, which the httpx instrumentation does not
see (ADR 0041).

What a span carries is what the semantic conventions name for an inference call, and nothing
of the conversation: ids, model names, token counts, the error's code. Never the prompt, the
answer's text or the draft (they hold customer data).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from adapters.ports.models import (
    DraftProvider,
    ModelAnswer,
    TagProvider,
    TagReply,
    TriageAnswer,
    TriageProvider,
)
from contracts import DraftPrompt
from contracts.errors import TollgateError
from contracts.tagging import TagPrompt

OPERATION = "chat"
#: Port name -> ``gen_ai.provider.name``. An OpenAI-compatible endpoint is called with the
#: OpenAI wire format, so the conventions name it ``openai``; ``server.address`` tells which.
PROVIDER_NAMES = {"openai": "openai", "openai-compatible": "openai", "anthropic": "anthropic",
                  "offline": "offline"}


class TracedDraftProvider:
    """One ``chat {model}`` span (kind CLIENT) around each ``propose`` of ``inner``."""

    def __init__(self, inner: DraftProvider, tracer: trace.Tracer, *,
                 base_url: str | None = None) -> None:
        self.name, self.model = inner.name, inner.model
        self.inner = inner
        self._tracer = tracer
        self._static = request_attributes(inner.name, inner.model, base_url)

    async def propose(self, prompt: DraftPrompt) -> ModelAnswer:
        answer: ModelAnswer = await traced_call(
            self._tracer, self._static, lambda: self.inner.propose(prompt))
        return answer


class TracedTriageProvider:
    """The same span around each ``triage`` of ``inner`` (a triage is a chat call too)."""

    def __init__(self, inner: TriageProvider, tracer: trace.Tracer, *,
                 base_url: str | None = None) -> None:
        self.name, self.model = inner.name, inner.model
        self.inner = inner
        self._tracer = tracer
        self._static = request_attributes(inner.name, inner.model, base_url)

    async def triage(self, prompt: DraftPrompt) -> TriageAnswer:
        answer: TriageAnswer = await traced_call(
            self._tracer, self._static, lambda: self.inner.triage(prompt))
        return answer


class TracedTagProvider:
    """The same span around each ``suggest_tags`` of ``inner`` (the tagging model)."""

    def __init__(self, inner: TagProvider, tracer: trace.Tracer, *,
                 base_url: str | None = None) -> None:
        self.name, self.model = inner.name, inner.model
        self.inner = inner
        self._tracer = tracer
        self._static = request_attributes(inner.name, inner.model, base_url)

    async def suggest_tags(self, prompt: TagPrompt) -> TagReply:
        reply: TagReply = await traced_call(
            self._tracer, self._static, lambda: self.inner.suggest_tags(prompt))
        return reply


async def traced_call(tracer: trace.Tracer, static: dict[str, Any],
                      call: Callable[[], Awaitable[Any]]) -> Any:
    """Run one model call inside its span; the answer's model and usage are added after."""
    # The exception is not recorded as an event: its message is the adapter's to word, and
    # error.type (a taxonomy code) says what went wrong without any text from the call.
    with tracer.start_as_current_span(
        f"{OPERATION} {static['gen_ai.request.model']}", kind=SpanKind.CLIENT,
        attributes=static, record_exception=False, set_status_on_exception=False,
    ) as span:
        try:
            answer = await call()
        except BaseException as exc:
            kind = error_type(exc)
            span.set_attribute("error.type", kind)
            span.set_status(Status(StatusCode.ERROR, kind))
            raise
        span.set_attributes(answer_attributes(answer))
        return answer


def request_attributes(provider: str, model: str, base_url: str | None) -> dict[str, Any]:
    """What is known before the call: operation, provider, requested model, server."""
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": OPERATION,
        "gen_ai.provider.name": PROVIDER_NAMES.get(provider, provider),
        "gen_ai.request.model": model,
    }
    if base_url:
        parts = urlsplit(base_url)
        if parts.hostname:
            attributes["server.address"] = parts.hostname
            attributes["server.port"] = parts.port or (443 if parts.scheme == "https" else 80)
    return attributes


def answer_attributes(answer: ModelAnswer | TriageAnswer | TagReply) -> dict[str, Any]:
    """What the answer told: the model that answered and the tokens it reports (none when the
    provider reported none: a count is never made up)."""
    attributes: dict[str, Any] = {"gen_ai.response.model": answer.model}
    usage = answer.usage
    if usage is not None and usage.input_tokens is not None:
        attributes["gen_ai.usage.input_tokens"] = usage.input_tokens
    if usage is not None and usage.output_tokens is not None:
        attributes["gen_ai.usage.output_tokens"] = usage.output_tokens
    return attributes


def error_type(exc: BaseException) -> str:
    """A low-cardinality name for the failure: the taxonomy code (``provider_429``,
    ``provider_timeout``, ``model_refused``, ``schema_invalid``), else the class name."""
    if isinstance(exc, TollgateError) and exc.code:
        return exc.code
    return type(exc).__qualname__
