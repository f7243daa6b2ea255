"""HTTP server spans with the semantic conventions' attributes (docs/tracing.md, "HTTP intake").

A plain ASGI middleware, installed by ``create_app`` only when tracing is on: one SERVER span
per request, named ``{method} {route}`` once the router matched (``POST /v1/events/{tenant}``).
The path is the route's template, never the concrete path: review ids, tenants and item ids in
paths, and every query string, stay out of spans (as for the client spans,
``tracing.scrubbed_url``). No header values and no client address (an IP address is personal
data). A caller that sends W3C ``traceparent`` is continued.

Written here rather than taken from ``opentelemetry-instrumentation-asgi``: that package records
the concrete path and query and adds a span per body chunk, which would then all need undoing
(ADR 0041); what the conventions ask of a server span is a handful of attributes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Probes and the API page's own files: frequent, and no one's request.
UNTRACED = ("/healthz", "/readyz", "/docs")
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE",
                      "PATCH"})


class ServerSpans:
    def __init__(self, app: ASGIApp, tracer: trace.Tracer) -> None:
        self.app = app
        self._tracer = tracer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = str(scope.get("path", ""))
        if scope.get("type") != "http" or path.startswith(UNTRACED):
            await self.app(scope, receive, send)
            return
        method = str(scope.get("method", "")).upper()
        method = method if method in _METHODS else "_OTHER"
        status: list[int] = []

        async def send_status(message: Message) -> None:
            if message.get("type") == "http.response.start":
                status.append(int(message["status"]))
            await send(message)

        with self._tracer.start_as_current_span(
            "HTTP" if method == "_OTHER" else method, context=_caller(scope),
            kind=SpanKind.SERVER, attributes=request_attributes(scope, method),
            record_exception=False, set_status_on_exception=False,
        ) as span:
            try:
                await self.app(scope, receive, send_status)
            except BaseException as exc:
                span.set_attribute("error.type", type(exc).__qualname__)
                span.set_status(Status(StatusCode.ERROR, type(exc).__qualname__))
                raise
            finally:
                _finish(span, scope, method, status)


def request_attributes(scope: Scope, method: str) -> dict[str, Any]:
    """What the request says before the app runs; the path waits for the route."""
    attributes: dict[str, Any] = {
        "http.request.method": method,
        "url.scheme": str(scope.get("scheme", "http")),
        "network.protocol.version": str(scope.get("http_version", "1.1")),
    }
    if method == "_OTHER":
        attributes["http.request.method_original"] = str(scope.get("method", ""))[:16]
    host = _header(scope, b"host")
    if host:
        # ASCII digits, five at most: ``str.isdigit`` passes ``²`` and 5,000 digits, which
        # ``int`` refuses (every request with such a Host was a 500).
        tail = host.rsplit(":", 1)[-1]
        name, _, port = host.rpartition(":") if tail.isascii() and tail.isdigit() \
            and len(tail) <= 5 else (host, "", "")
        attributes["server.address"] = name
        if port:
            attributes["server.port"] = int(port)
    return attributes


def _finish(span: trace.Span, scope: Scope, method: str, status: list[int]) -> None:
    """Name the span by its route, and record the answer; a 5xx is the server's error."""
    route = getattr(scope.get("route"), "path", None)
    # Unmatched (a 404, a mount): the first path segment only, as for client spans.
    segments = [s for s in str(scope.get("path", "")).split("/") if s]
    path = route or ("/" + segments[0] + ("/…" if len(segments) > 1 else "") if segments else "/")
    span.set_attribute("url.path", path)
    if route:
        span.set_attribute("http.route", route)
        span.update_name(f"{'HTTP' if method == '_OTHER' else method} {route}")
    if status:
        span.set_attribute("http.response.status_code", status[0])
        if status[0] >= 500:
            span.set_attribute("error.type", str(status[0]))
            span.set_status(Status(StatusCode.ERROR))


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers") or ():
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


def _caller(scope: Scope) -> Any:
    """The caller's trace context from ``traceparent``/``tracestate``; None when it sent none."""
    carrier = {n: v for n in ("traceparent", "tracestate")
               if (v := _header(scope, n.encode())) is not None}
    return TraceContextTextMapPropagator().extract(carrier) if carrier else None
