"""The temporal and database sections: where the servers are.

temporalio's own client configuration (a TOML profile plus ``TEMPORAL_*`` variables for TLS and
API keys, read by ``temporalio.envconfig`` in ``tollgate/runtime/client.py``) stays the SDK's job:
only the variables Tollgate itself reads are fields here.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import SecretStr

from tollgate.config.base import Section, env_field

DEFAULT_TASK_QUEUE = "tollgate"
DEFAULT_TEMPORAL_ADDRESS = "127.0.0.1:7233"
DEFAULT_NAMESPACE = "default"


class TemporalSettings(Section):
    """The Temporal frontend and the task queue."""

    address: str = env_field(
        "TEMPORAL_ADDRESS", DEFAULT_TEMPORAL_ADDRESS, "host:port of the Temporal frontend. "
        "Unset: the running `tollgate dev`'s, else a profile file's, else this default.")
    namespace: str = env_field("TEMPORAL_NAMESPACE", DEFAULT_NAMESPACE, "Temporal namespace.")
    task_queue: str = env_field("TOLLGATE_TASK_QUEUE", DEFAULT_TASK_QUEUE,
                                "Task queue of the main worker.")
    config_file: Path | None = env_field(
        "TEMPORAL_CONFIG_FILE", None, "temporalio's client profile file (TOML). Unset: the "
        "SDK's per-user path; named but missing: refused.")
    profile: str | None = env_field("TEMPORAL_PROFILE", None,
                                    "Profile in that file. Unset: `default`.")


class DatabaseSettings(Section):
    """PostgreSQL."""

    url: SecretStr | None = env_field(
        "DATABASE_URL", None, "PostgreSQL URL (may carry a password: masked everywhere). "
        "Unset: the running `tollgate dev`'s.")
