"""Prometheus metrics for operators (docs/metrics.md).

The figures that must survive a worker restart (events by state, receipts by status, dead
letters and quarantines by reason, reviews past SLA, kill switches, the age of the oldest record
in each open state) are read from PostgreSQL at scrape time by one collector, never counted in
process memory. Labels are tenant, adapter, state and reason codes: nothing personal.

The exporter is started by the main worker when ``TOLLGATE_METRICS_PORT`` is set (``tollgate dev``
sets it); it listens on 127.0.0.1 unless ``TOLLGATE_METRICS_HOST`` says otherwise. The families
themselves are built in ``tollgate/observability/metric_families.py``.

The Temporal SDK's own metrics (workflow task latency, pollers, activity results) come from a
``Runtime`` with a Prometheus exporter on its own port, ``TOLLGATE_SDK_METRICS_PORT``
(``sdk_runtime``): the Rust core serves them, so they cannot share Tollgate's registry.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import asyncpg
from prometheus_client.core import Metric
from prometheus_client.registry import Collector, CollectorRegistry
from temporalio.runtime import PrometheusConfig, Runtime, TelemetryConfig

from adapters.postgres.metrics import MetricsStore
from tollgate.config.worker import ObservabilitySettings
from tollgate.observability.metric_families import KEYS, families

__all__ = ["KEYS", "PostgresCollector", "families", "sdk_runtime", "start_exporter"]

#: How long a scrape waits for PostgreSQL before it answers with what it has (nothing).
SCRAPE_TIMEOUT_S = 5.0


class PostgresCollector(Collector):
    """Reads the gauges on the worker's own event loop (the pool lives there) from the
    exporter's thread."""

    def __init__(self, pool: asyncpg.Pool, loop: asyncio.AbstractEventLoop) -> None:
        self._store, self._loop = MetricsStore(pool), loop

    def collect(self) -> Iterator[Metric]:
        future = asyncio.run_coroutine_threadsafe(
            self._store.gauges(datetime.now(UTC)), self._loop)
        yield from families(future.result(SCRAPE_TIMEOUT_S))


def start_exporter(pool: asyncpg.Pool, observability: ObservabilitySettings) -> Any | None:
    """Serve ``/metrics`` on ``TOLLGATE_METRICS_PORT`` (unset: no exporter). Returns the server
    (``shutdown()`` stops it) or None."""
    from prometheus_client import start_http_server

    port = observability.metrics_port
    if port is None:
        return None
    registry = CollectorRegistry()
    registry.register(PostgresCollector(pool, asyncio.get_running_loop()))
    server, _thread = start_http_server(port, addr=observability.metrics_host, registry=registry)
    return server


def sdk_runtime(observability: ObservabilitySettings) -> Runtime | None:
    """A Temporal runtime whose Prometheus exporter serves the SDK's metrics on
    ``TOLLGATE_SDK_METRICS_PORT`` (unset: None, the SDK's default runtime and no exporter).

    Pass it to ``build_client``; every worker built on that client reports through it. It
    listens on ``TOLLGATE_METRICS_HOST`` (default 127.0.0.1), like Tollgate's own exporter.

    Raises:
        SystemExit: one line when the port is not a number or is taken.
    """
    port = observability.sdk_metrics_port
    if port is None:
        return None
    address = f"{observability.metrics_host}:{port}"
    try:
        return Runtime(telemetry=TelemetryConfig(metrics=PrometheusConfig(bind_address=address)))
    except (RuntimeError, ValueError) as exc:  # the core's "Address already in use"
        raise SystemExit(f"TOLLGATE_SDK_METRICS_PORT: cannot serve the SDK's metrics on {address} "
                         f"({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})"
                         ) from None
