"""The worker and observability sections: how a worker process runs, versions itself and
reports."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Self

from pydantic import SecretStr, ValidationInfo, field_validator, model_validator

from tollgate.config.base import (
    Section,
    comma_list,
    env_field,
    port_number,
    positive_number,
    whole_number,
)

#: Workflows the main worker keeps in its sticky cache (the SDK's default is 1,000). Each cached
#: run costs ≈ 0.14 MB and runs waiting for review stay cached until evicted: with 2,000 parked
#: the SDK default took the worker to 276 MB, 400 to 188 MB (the goal is 200; 300 leaves room).
#: An evicted run costs one replay when its next task arrives (docs/performance.md, "Parked").
MAX_CACHED_WORKFLOWS = 300
#: Workflow tasks the main worker holds at once (the SDK's default is 100). With its polls
#: scaled by the server (ADR 0087), parking 2,000 events filled the 100 and took the worker to
#: 206-213 MB; 30 kept it at 189 MB, and CPU per event did not move (docs/performance.md,
#: "Fourteenth session").
MAX_WORKFLOW_TASKS = 30
DEFAULT_DRAIN_S = 10.0


class WorkerSettings(Section):
    """A worker process (``python worker.py``): draining, health, versioning, cache."""

    drain_seconds: float = env_field(
        "TOLLGATE_DRAIN_SECONDS", DEFAULT_DRAIN_S, "Seconds activities in flight get to "
        "finish after SIGTERM before they are cancelled (the grace period must exceed it).")
    health_port: int | None = env_field(
        "TOLLGATE_HEALTH_PORT", None, "Port of /livez and /readyz. Unset: no health server.")
    health_host: str = env_field("TOLLGATE_HEALTH_HOST", "127.0.0.1",
                                 "Address the health server binds.")
    max_cached_workflows: int = env_field(
        "TOLLGATE_MAX_CACHED_WORKFLOWS", MAX_CACHED_WORKFLOWS, "Workflows the main worker keeps "
        "in its sticky cache (docs/performance.md).")
    workflow_task_pollers: int | None = env_field(
        "TOLLGATE_WORKFLOW_TASK_POLLERS", None, "Concurrent workflow-task polls of the main "
        "worker. Unset: scaled by the server's hints, 1 to 100, so a burst of new events is "
        "not queued behind one poll; N: at most N, a fifth of them for new runs (ADR 0087).")
    max_workflow_tasks: int = env_field(
        "TOLLGATE_MAX_WORKFLOW_TASKS", MAX_WORKFLOW_TASKS, "Workflow tasks the main worker "
        "holds at once; a burst beyond them waits on the queue (ADR 0087).")
    deployment_name: str | None = env_field(
        "TOLLGATE_DEPLOYMENT_NAME", None, "Worker deployment name; with TOLLGATE_BUILD_ID the "
        "workers poll as a version (docs/deploy.md).")
    build_id: str | None = env_field("TOLLGATE_BUILD_ID", None,
                                     "Build id of that version (the image tag).")
    consumers_down: tuple[str, ...] = env_field(
        "TOLLGATE_CONSUMERS_DOWN", (), "Fault injection for the demo and drills: fan-out "
        "consumers that refuse every delivery, comma-separated.")
    action_token_key: SecretStr | None = env_field(
        "TOLLGATE_ACTION_TOKEN_KEY", None, "Key that signs the action token of every approved "
        "send (32+ characters, the same on every worker; beats the file).")
    action_token_key_file: Path | None = env_field(
        "TOLLGATE_ACTION_TOKEN_KEY_FILE", None, "File holding that key. Unset: "
        "$TOLLGATE_STATE_DIR/action-token.key (`tollgate dev` writes it at 0600).")
    action_token_ttl_s: float = env_field(
        "TOLLGATE_ACTION_TOKEN_TTL_SECONDS", 900.0, "Seconds an action token lives; a run "
        "held longer (a kill switch) mints it again for the same approval (ADR 0027).")

    @field_validator("action_token_key", mode="before")
    @classmethod
    def _token_key(cls, raw: Any) -> Any:
        if isinstance(raw, str) and len(raw.strip()) < 32:
            raise ValueError("TOLLGATE_ACTION_TOKEN_KEY: expected 32 or more characters")
        return raw

    @field_validator("action_token_ttl_s", mode="before")
    @classmethod
    def _token_ttl(cls, raw: Any) -> float:
        return positive_number(raw, "TOLLGATE_ACTION_TOKEN_TTL_SECONDS")

    @field_validator("drain_seconds", mode="before")
    @classmethod
    def _drain(cls, raw: Any) -> float:
        try:
            seconds = float(raw)
        except (TypeError, ValueError):
            seconds = -1.0
        if seconds < 0:
            raise ValueError(f"TOLLGATE_DRAIN_SECONDS: expected seconds >= 0, got {raw!r}")
        return seconds

    @field_validator("health_port", mode="before")
    @classmethod
    def _health_port(cls, raw: Any) -> int:
        return port_number(raw, "TOLLGATE_HEALTH_PORT", lowest=1)

    @field_validator("max_cached_workflows", "workflow_task_pollers", "max_workflow_tasks",
                     mode="before")
    @classmethod
    def _counts(cls, raw: Any, info: ValidationInfo) -> int:
        # The SDK needs two slots for a worker with a sticky cache; one cached run or poll will do.
        lowest = 2 if info.field_name == "max_workflow_tasks" else 1
        return whole_number(raw, cls.variable(str(info.field_name)), lowest=lowest)

    @field_validator("deployment_name", "build_id", mode="before")
    @classmethod
    def _stripped(cls, raw: Any) -> Any:
        return raw.strip() if isinstance(raw, str) else raw

    @field_validator("consumers_down", mode="before")
    @classmethod
    def _names(cls, raw: Any) -> tuple[str, ...]:
        return comma_list(raw)

    @model_validator(mode="after")
    def _both_or_neither(self) -> Self:
        if bool(self.deployment_name) != bool(self.build_id):
            missing = ("TOLLGATE_DEPLOYMENT_NAME" if not self.deployment_name
                       else "TOLLGATE_BUILD_ID")
            raise ValueError("worker versioning needs both TOLLGATE_DEPLOYMENT_NAME and "
                             f"TOLLGATE_BUILD_ID; {missing} is not set")
        return self


#: The Rust core's levels ``TOLLGATE_SDK_LOG_LEVEL`` takes, quietest first. Not INFO or DEBUG:
#: forwarded at that rate, lines still in flight when a command exits abort the process on a
#: core thread (exit 134, 2 runs in 6 here).
SDK_LOG_LEVELS = ("OFF", "ERROR", "WARN")


class ObservabilitySettings(Section):
    """Traces (OTLP) and metrics (Prometheus)."""

    otlp_endpoint: str | None = env_field(
        "OTEL_EXPORTER_OTLP_ENDPOINT", None, "OTLP/HTTP collector; set: tracing on "
        "(docs/tracing.md).")
    otlp_traces_endpoint: str | None = env_field(
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", None, "Traces-only OTLP endpoint (beats the "
        "one above).")
    service_name: str = env_field("OTEL_SERVICE_NAME", "tollgate", "service.name of the spans.")
    metrics_port: int | None = env_field(
        "TOLLGATE_METRICS_PORT", None, "Port of the main worker's /metrics. Unset: no exporter.")
    metrics_host: str = env_field("TOLLGATE_METRICS_HOST", "127.0.0.1",
                                  "Address both metrics exporters bind.")
    sdk_metrics_port: int | None = env_field(
        "TOLLGATE_SDK_METRICS_PORT", None, "Port of the Temporal SDK's metrics (main worker). "
        "Unset: not served.")

    sdk_log_level: str = env_field(
        "TOLLGATE_SDK_LOG_LEVEL", "ERROR", "The Temporal SDK's own log lines (its Rust core) at "
        "this level and above, on stderr with the others: OFF, ERROR or WARN (its retries).")

    @field_validator("sdk_log_level", mode="before")
    @classmethod
    def _sdk_level(cls, raw: Any) -> str:
        level = str(raw).strip().upper()
        if level not in SDK_LOG_LEVELS:
            raise ValueError(f"TOLLGATE_SDK_LOG_LEVEL={str(raw)[:20]!r} is not one of "
                             f"{', '.join(SDK_LOG_LEVELS)}")
        return level

    @field_validator("metrics_port", "sdk_metrics_port", mode="before")
    @classmethod
    def _port(cls, raw: Any, info: ValidationInfo) -> int:
        return port_number(raw, cls.variable(str(info.field_name)))

    @property
    def traces_endpoint(self) -> str | None:
        """Where spans go, or None: tracing off."""
        if self.otlp_traces_endpoint:
            return self.otlp_traces_endpoint
        return f"{self.otlp_endpoint.rstrip('/')}/v1/traces" if self.otlp_endpoint else None
