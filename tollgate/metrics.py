"""Prometheus metrics for operators (docs/metrics.md).

The figures that must survive a worker restart (events by state, receipts by status, dead
letters and quarantines by reason, reviews past SLA, kill switches, the age of the oldest record
in each open state) are read from PostgreSQL at scrape time by one collector, never counted in
process memory. Labels are tenant, adapter, state and reason codes: nothing personal.

The exporter is started by the main worker when ``TOLLGATE_METRICS_PORT`` is set (``tollgate dev``
sets it); it listens on 127.0.0.1 unless ``TOLLGATE_METRICS_HOST`` says otherwise.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

import asyncpg
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector, CollectorRegistry

from adapters.postgres_status import MetricsStore

#: How long a scrape waits for PostgreSQL before it answers with what it has (nothing).
SCRAPE_TIMEOUT_S = 5.0


class PostgresCollector(Collector):
    """Reads the gauges on the worker's own event loop (the pool lives there) from the
    exporter's thread."""

    def __init__(self, pool: asyncpg.Pool, loop: asyncio.AbstractEventLoop) -> None:
        self._store, self._loop = MetricsStore(pool), loop

    def collect(self) -> Iterator[GaugeMetricFamily]:
        future = asyncio.run_coroutine_threadsafe(
            self._store.gauges(datetime.now(UTC)), self._loop)
        yield from families(future.result(SCRAPE_TIMEOUT_S))


def _family(name: str, doc: str, labels: list[str], rows: list[dict[str, Any]],
            value: str = "n") -> GaugeMetricFamily:
    family = GaugeMetricFamily(name, doc, labels=labels)
    for row in rows:
        family.add_metric([str(row[label]) for label in labels], float(row[value] or 0))
    return family


def families(g: Mapping[str, list[dict[str, Any]]]) -> Iterator[GaugeMetricFamily]:
    yield _family("tollgate_events", "Events by tenant and current state.",
                  ["tenant_id", "state"], g["events"])
    yield _family("tollgate_state_oldest_age_seconds",
                  "Age of the oldest record in each state a record leaves on its own.",
                  ["state"], g["oldest"], value="age")
    yield _family("tollgate_receipts", "Receipts by tenant, adapter and status.",
                  ["tenant_id", "adapter", "status"], g["receipts"])
    yield _family("tollgate_dead_letters", "Dead letters by tenant, reason code and status.",
                  ["tenant_id", "error_code", "status"], g["dead_letters"])
    yield _family("tollgate_quarantined", "Quarantined deliveries by reason code.",
                  ["reason_code"], g["quarantine"])
    yield _family("tollgate_reviews_past_sla", "Reviews waiting past their SLA, by tenant.",
                  ["tenant_id"], g["past_sla"])
    switches = GaugeMetricFamily("tollgate_kill_switch_closed",
                                 "1 when the kill switch for (adapter, tenant) is closed.",
                                 labels=["adapter", "tenant_id"])
    for row in g["switches"]:
        switches.add_metric([row["adapter"], row["tenant_id"]], 1.0 if row["closed"] else 0.0)
    yield switches


def start_exporter(pool: asyncpg.Pool, env: Mapping[str, str]) -> Any | None:
    """Serve ``/metrics`` on ``TOLLGATE_METRICS_PORT`` (unset: no exporter). Returns the server
    (``shutdown()`` stops it) or None."""
    from prometheus_client import start_http_server

    port = env.get("TOLLGATE_METRICS_PORT", "").strip()
    if not port:
        return None
    registry = CollectorRegistry()
    registry.register(PostgresCollector(pool, asyncio.get_running_loop()))
    server, _thread = start_http_server(int(port), addr=env.get("TOLLGATE_METRICS_HOST",
                                                                 "127.0.0.1"),
                                        registry=registry)
    return server
