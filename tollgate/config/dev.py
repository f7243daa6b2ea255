"""The dev and cli sections: the embedded stack's ports and what the command line reads."""

from __future__ import annotations

from typing import Any

from pydantic import SecretStr, ValidationInfo, field_validator

from tollgate.config.base import Section, env_field, port_number


class DevSettings(Section):
    """``tollgate dev``: the embedded stack's loopback ports (0 picks a free one). Its HTTP,
    metrics and SDK metrics ports are the http and observability sections' variables."""

    temporal_port: int | None = env_field("TOLLGATE_TEMPORAL_PORT", None,
                                          "Temporal frontend port. Unset: 7233.")
    ui_port: int | None = env_field("TOLLGATE_UI_PORT", None, "Temporal Web UI port. Unset: 8233.")
    crm_port: int | None = env_field("TOLLGATE_CRM_PORT", None, "Stand-in CRM port. Unset: 8301.")
    messaging_port: int | None = env_field("TOLLGATE_MESSAGING_PORT", None,
                                           "Stand-in messaging port. Unset: 8302.")

    @field_validator("*", mode="before")
    @classmethod
    def _port(cls, raw: Any, info: ValidationInfo) -> int:
        return port_number(raw, cls.variable(str(info.field_name)))


class CliSettings(Section):
    """What ``tollgate`` commands read. The ``TOLLGATE_STATUS_*`` and ``TOLLGATE_TOKEN`` values
    are also their options' defaults, which Click reads itself (``show_envvar`` in ``--help``)."""

    debug: bool = env_field("TOLLGATE_DEBUG", False,
                            "Set: a command's unexpected error shows its traceback.")
    ui_url: str | None = env_field(
        "TOLLGATE_UI_URL", None, "Temporal Web UI for the links commands print. Unset: the "
        "running `tollgate dev`'s, else http://127.0.0.1:8233.")
    token: SecretStr | None = env_field("TOLLGATE_TOKEN", None,
                                        "Access token of `tollgate review` commands.")
    timeout: float = env_field(
        "TOLLGATE_CLI_TIMEOUT", 10.0, "Seconds a command waits for Temporal to connect or to "
        "answer a read (list, describe, query) before its exit-3 line; `review list` waits as "
        "long for PostgreSQL's read of the drafts' flags, then asks the runs instead.")
    status_max_past_sla: int = env_field("TOLLGATE_STATUS_MAX_PAST_SLA", 0,
                                         "`ops status`: reviews past SLA before exit 6.")
    status_max_unknown: int = env_field("TOLLGATE_STATUS_MAX_UNKNOWN", 0,
                                        "`ops status`: open unknown writes before exit 6.")
    status_max_dead_letters: int = env_field("TOLLGATE_STATUS_MAX_DEAD_LETTERS", 0,
                                             "`ops status`: waiting dead letters before exit 6.")
    status_max_open_minutes: float = env_field(
        "TOLLGATE_STATUS_MAX_OPEN_MINUTES", 60.0, "`ops status`: age of the oldest record in "
        "a state it should leave on its own before exit 6.")

    @field_validator("debug", mode="before")
    @classmethod
    def _set(cls, raw: Any) -> bool:
        # As before: any non-empty value turns it on ("0" included).
        return bool(raw)
