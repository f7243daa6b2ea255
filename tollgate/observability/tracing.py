"""OpenTelemetry tracing: one event is one trace, from the producer's submit through the
workflow, every activity and HTTP call, to the receipt and the reconciler (docs/tracing.md).

Off unless ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set (then spans go out over OTLP/HTTP) or a test
hands in its own provider (``use_provider``). Off costs nothing: no interceptor, no span.

The trace id comes from the envelope's ``correlation_id``: a W3C ``traceparent`` or a 32-hex
trace id is continued as it is; any other id is hashed (with the tenant) into one, so every
delivery of an event, and a producer that traced it, land in the same trace.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from opentelemetry import trace

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from temporalio.client import Interceptor

    from tollgate.config.worker import ObservabilitySettings

_TRACEPARENT = re.compile(r"00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}")
_TRACE_ID = re.compile(r"[0-9a-f]{32}")
#: The one provider of this process; None: tracing is off.
_provider: TracerProvider | None = None


def use_provider(provider: TracerProvider | None) -> None:
    """Turn tracing on with ``provider`` (None: off), and instrument httpx for it."""
    from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor

    global _provider
    instrumentor = HTTPXClientInstrumentor()
    if instrumentor.is_instrumented_by_opentelemetry:
        instrumentor.uninstrument()
    _provider = provider
    if provider is not None:
        instrumentor.instrument(tracer_provider=provider, async_request_hook=_scrub_url,
                                request_hook=_scrub_url_sync)


def configure(observability: ObservabilitySettings) -> TracerProvider | None:
    """Export over OTLP/HTTP when ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or the traces-only
    ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) is set; once per process. Returns the provider
    this call made, None when tracing stays off or was already on."""
    traces = observability.traces_endpoint
    if _provider is not None or not traces:
        return None
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    # The endpoint from the settings' environment, not the process's: tests and child
    # processes hand in their own (OTEL_EXPORTER_OTLP_HEADERS is still read by the exporter).
    provider = TracerProvider(resource=Resource.create(
        {"service.name": observability.service_name}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=traces)))
    use_provider(provider)
    return provider


def tracer(name: str) -> trace.Tracer | None:
    """A tracer from this process's provider, None while tracing is off (then callers make
    nothing at all)."""
    return _provider.get_tracer(name) if _provider is not None else None


def interceptors() -> list[Interceptor]:
    """Temporal's tracing interceptor when tracing is on; workers built from the client use it
    too (it is also a worker interceptor)."""
    if _provider is None:
        return []
    from temporalio.contrib.opentelemetry import TracingInterceptor

    return [TracingInterceptor(tracer=_provider.get_tracer("tollgate.temporal"))]


@contextmanager
def submit_span(raw: str, workflow_id: str) -> Iterator[None]:
    """The root span of an event's trace around the producer's submit (no-op when off)."""
    if _provider is None:
        yield
        return
    tracer = _provider.get_tracer("tollgate.intake")
    # The event's trace comes from its correlation id, not from whatever span is current; a
    # delivery being handled (a broker's process span) is linked, so either leads to the other.
    # (Without a correlation id the submit is simply the current span's child.)
    parent, current = _parent(raw), trace.get_current_span().get_span_context()
    with tracer.start_as_current_span(
        "tollgate.submit", context=parent, kind=trace.SpanKind.PRODUCER,
        attributes={"tollgate.workflow_id": workflow_id},
        links=[trace.Link(current)] if parent is not None and current.is_valid else None,
    ):
        yield


def _parent(raw: str) -> Any:
    """A remote parent carrying the trace id the envelope names; None for a fresh trace."""
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    correlation = data.get("correlation_id") if isinstance(data, dict) else None
    if not isinstance(correlation, str) or not correlation:
        return None
    value = correlation.lower()
    match = _TRACEPARENT.fullmatch(value)
    if match:
        trace_id, span_id = int(match[1], 16), int(match[2], 16)
    else:
        digest = hashlib.sha256(f"{data.get('tenant_id')}:{correlation}".encode()).digest()
        trace_id = int(value, 16) if _TRACE_ID.fullmatch(value) else int.from_bytes(digest[:16])
        span_id = int.from_bytes(digest[16:24])
    if not trace_id or not span_id:
        return None
    parent = trace.NonRecordingSpan(trace.SpanContext(
        trace_id, span_id, is_remote=True, trace_flags=trace.TraceFlags(trace.TraceFlags.SAMPLED)))
    return trace.set_span_in_context(parent)


def scrubbed_url(url: str) -> str:
    """Scheme, host and the first path segment: ids in the rest of a path (a customer, an
    idempotency key) and the query never reach a span."""
    parts = urlsplit(url)
    segments = [s for s in parts.path.split("/") if s]
    path = f"/{segments[0]}" + ("/…" if len(segments) > 1 else "") if segments else ""
    return f"{parts.scheme}://{parts.netloc.rsplit('@', 1)[-1]}{path}"


def _scrub_url_sync(span: Any, request: Any) -> None:
    attributes = getattr(span, "attributes", None) or {}
    for key in ("http.url", "url.full"):
        if key in attributes:
            span.set_attribute(key, scrubbed_url(str(request.url)))


async def _scrub_url(span: Any, request: Any) -> None:
    _scrub_url_sync(span, request)
