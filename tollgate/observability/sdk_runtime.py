"""The Temporal runtime of a process (its SDK log lines and, when asked, its own Prometheus
exporter), apart from ``tollgate.observability.metrics``: every client builds one, so a command
that talks to Temporal imports this and not Tollgate's metrics (prometheus_client, the
PostgreSQL gauges' queries), about 0.1 s of a console script's start."""

from __future__ import annotations

from temporalio.runtime import PrometheusConfig, Runtime, TelemetryConfig

from tollgate.config.worker import ObservabilitySettings
from tollgate.observability.logs import sdk_logging


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
    # a finalising interpreter (exit 134; tollgate.cli.output.finish collects the client).
    return Runtime(telemetry=TelemetryConfig(logging=sdk_logging(level)))
