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
(``tollgate/observability/sdk_runtime.py``): the Rust core serves them, so they cannot share
Tollgate's registry.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import asyncpg
from prometheus_client.core import Metric
from prometheus_client.registry import Collector, CollectorRegistry

from adapters.postgres.metrics import MetricsStore
from tollgate.config.worker import ObservabilitySettings
from tollgate.observability.metric_families import families

__all__ = ["PostgresCollector", "start_exporter"]

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
    try:
        server, _thread = start_http_server(port, addr=observability.metrics_host,
                                            registry=registry)
    except OSError as exc:  # taken, or not this machine's address: one line, as dev says
        why = os.strerror(exc.errno).lower() if exc.errno else str(exc)
        raise SystemExit(f"TOLLGATE_METRICS_PORT: cannot serve /metrics on "
                         f"{observability.metrics_host}:{port} ({why})") from None
    return server


