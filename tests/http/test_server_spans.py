"""HTTP intake requests are SERVER spans with the semantic conventions' attributes (issue 29
item 7), named by the route, never carrying the concrete path, a query or a header's value."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import httpx
import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.http.events_support import event
from tests.http.webhooks_support import sender, webhook_headers
from tollgate.http.app import create_app
from tollgate.http.deps import Services

CALLER_TRACE = "0af7651916cd43dd8448eb211c80319c"


@pytest.fixture
async def traced_api(spans: InMemorySpanExporter, http_services: Services
                     ) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(http_services)),
                                 base_url="http://tollgate.test:8088") as client:
        yield client


def server_spans(spans: InMemorySpanExporter) -> list[ReadableSpan]:
    return [s for s in spans.get_finished_spans() if s.kind.name == "SERVER"]


async def test_a_standard_webhook_is_a_server_span_named_by_its_route(
        traced_api: httpx.AsyncClient, spans: InMemorySpanExporter) -> None:
    ev = event(entity_id="C-secret-77")
    ev["payload"]["customer_id"] = "C-secret-77"
    raw = json.dumps(ev).encode()
    headers = {**webhook_headers(raw, sender("acme")),
               "traceparent": f"00-{CALLER_TRACE}-b7ad6b7169203331-01"}

    answer = await traced_api.post("/v1/events/acme?debug=C-secret-77", content=raw,
                                   headers=headers)

    assert answer.status_code == 202, answer.text
    [span] = server_spans(spans)
    assert span.name == "POST /v1/events/{tenant}"
    assert dict(span.attributes or {}) == {
        "http.request.method": "POST", "http.route": "/v1/events/{tenant}",
        "url.path": "/v1/events/{tenant}", "url.scheme": "http",
        "network.protocol.version": "1.1", "server.address": "tollgate.test",
        "server.port": 8088, "http.response.status_code": 202}
    # The caller's trace is continued.
    assert span.context.trace_id == int(CALLER_TRACE, 16)
    assert span.parent is not None and span.parent.span_id == 0xb7ad6b7169203331
    text = repr([dict(s.attributes or {}) for s in spans.get_finished_spans()])
    for private in ("C-secret-77", ev["idempotency_key"], headers["webhook-signature"]):
        assert private not in text


async def test_a_refused_event_is_not_a_server_error_and_an_unknown_path_keeps_one_segment(
        traced_api: httpx.AsyncClient, spans: InMemorySpanExporter) -> None:
    raw = json.dumps(event()).encode()
    refused = await traced_api.post("/v1/events/acme", content=raw,
                                    headers={"content-type": "application/json"})
    missing = await traced_api.get("/v1/nothing/C-secret-77")
    await traced_api.get("/healthz")

    assert (refused.status_code, missing.status_code) == (401, 404)
    by_name = {s.name: dict(s.attributes or {}) for s in server_spans(spans)}
    assert set(by_name) == {"POST /v1/events/{tenant}", "GET"}  # no probe span
    assert by_name["POST /v1/events/{tenant}"]["http.response.status_code"] == 401
    assert "error.type" not in by_name["POST /v1/events/{tenant}"]  # 4xx: the caller's
    assert by_name["GET"]["url.path"] == "/v1/…"
    assert by_name["GET"]["http.response.status_code"] == 404


async def test_tracing_off_adds_no_middleware(http_services: Services) -> None:
    app = create_app(http_services)
    assert not [m for m in app.user_middleware if m.cls.__name__ == "ServerSpans"]


@pytest.mark.parametrize("port", [b"\xb2", b"9" * 5000], ids=["superscript", "5000 digits"])
async def test_a_host_port_python_calls_digits_but_no_number_is_no_500(
        traced_api: httpx.AsyncClient, spans: InMemorySpanExporter, port: bytes) -> None:
    """``²`` (a Latin-1 header byte) and 5,000 digits pass ``str.isdigit``; ``int()`` refuses
    both: every request with such a Host was a 500 while tracing was on."""
    raw = json.dumps(event()).encode()
    answer = await traced_api.post("/v1/events/acme", content=raw, headers={
        **webhook_headers(raw, sender("acme")), "host": b"tollgate.test:" + port})

    assert answer.status_code == 202, answer.text
    [span] = server_spans(spans)
    assert "server.port" not in dict(span.attributes or {})
