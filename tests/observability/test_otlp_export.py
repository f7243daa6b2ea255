"""Spans leave the process only when an OTLP endpoint is configured, and then over OTLP/HTTP."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from tests.ports import free_port
from tollgate.config.worker import ObservabilitySettings
from tollgate.observability import tracing


class Collector(BaseHTTPRequestHandler):
    received: list[str] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        Collector.received.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def collector() -> Iterator[str]:
    server = HTTPServer(("127.0.0.1", free_port()), Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


def test_nothing_is_traced_or_exported_without_an_endpoint() -> None:
    assert tracing.configure(ObservabilitySettings.from_env({})) is None
    assert tracing.interceptors() == []


def test_an_endpoint_sends_the_spans_over_otlp_http(collector: str) -> None:
    Collector.received.clear()
    provider = tracing.configure(ObservabilitySettings.from_env(
        {"OTEL_EXPORTER_OTLP_ENDPOINT": collector}))
    assert provider is not None
    try:
        assert len(tracing.interceptors()) == 1
        with tracing.submit_span('{"tenant_id": "acme", "correlation_id": "c-1"}', "event/a/k"):
            pass
        assert provider.force_flush(10_000)
    finally:
        tracing.use_provider(None)
        provider.shutdown()
    assert Collector.received == ["/v1/traces"]
