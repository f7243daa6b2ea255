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
from tollgate.observability.logs import sdk_logging
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


def sdk_runtime(observability: ObservabilitySettings) -> Runtime:
    """The Temporal runtime of a process: the SDK's log lines at ``TOLLGATE_SDK_LOG_LEVEL`` on
    stderr (``tollgate.observability.logs.sdk_logging``) and, with ``TOLLGATE_SDK_METRICS_PORT``,
    a Prometheus exporter serving the SDK's metrics there (unset: no exporter).

    ``build_client`` uses it when given none; every worker built on that client reports
    through it. The exporter listens on ``TOLLGATE_METRICS_HOST`` (default 127.0.0.1), like
    Tollgate's own.

    Raises:
        SystemExit: one line when the port is not a number or is taken.
    """
    port = observability.sdk_metrics_port
    if port is None:
        return _quiet_runtime(observability.sdk_log_level)
    address = f"{observability.metrics_host}:{port}"
    try:
        return Runtime(telemetry=TelemetryConfig(
            logging=sdk_logging(observability.sdk_log_level),
            # Prometheus' naming rules (promtool check metrics): counters end in _total,
            # durations are seconds and say so (..._latency_seconds); the SDK's defaults are
            # bare counter names and integer milliseconds.
            metrics=PrometheusConfig(bind_address=address, counters_total_suffix=True,
                                     unit_suffix=True, durations_as_seconds=True)))
    except (RuntimeError, ValueError) as exc:  # the core's "Address already in use"
        raise SystemExit(f"TOLLGATE_SDK_METRICS_PORT: cannot serve the SDK's metrics on {address} "
                         f"({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})"
                         ) from None


def _quiet_runtime(level: str) -> Runtime:
    # One per client, never cached: it must go with its client. A runtime that forwards logs
    # and outlives the interpreter's last collection is dropped on a core thread calling into
    # a finalising interpreter (exit 134; tollgate.cli.common.finish collects the client).
    return Runtime(telemetry=TelemetryConfig(logging=sdk_logging(level)))
