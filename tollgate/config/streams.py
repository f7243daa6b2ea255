"""The Redis Streams intake's section (``python -m tollgate.runtime.redis_intake``,
docs/redis-intake.md): where the stream is, its consumer group, and the bounds on one entry."""

from __future__ import annotations

import re
from typing import Any, Self

from pydantic import SecretStr, ValidationInfo, field_validator, model_validator

from tollgate.config.base import Section, env_field, port_number, positive_number, whole_number

#: Stream, group and consumer names: plain names, so a log line or a key never carries text.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")


class RedisSettings(Section):
    """The Redis Streams intake (``python -m tollgate.runtime.redis_intake``)."""

    url: SecretStr | None = env_field(
        "TOLLGATE_REDIS_URL", None,
        "redis://user:pass@host:6379/0 of the stream (masked: it may carry a password).")
    stream: str = env_field("TOLLGATE_REDIS_STREAM", "tollgate.events",
                            "Stream the producers XADD events to.")
    group: str = env_field("TOLLGATE_REDIS_GROUP", "tollgate",
                           "Consumer group the intake reads the stream as.")
    dead_stream: str = env_field(
        "TOLLGATE_REDIS_DEAD_STREAM", "tollgate.events.dead",
        "Stream poison entries are moved to, each with its reason.")
    consumer: str | None = env_field(
        "TOLLGATE_REDIS_CONSUMER", None,
        "This process's consumer name in the group. Unset: host name and process id.")
    claim_idle_s: float = env_field(
        "TOLLGATE_REDIS_CLAIM_IDLE_S", 60.0, "Seconds an entry may sit delivered and unacked "
        "before another consumer takes it over (XAUTOCLAIM).")
    max_deliveries: int = env_field(
        "TOLLGATE_REDIS_MAX_DELIVERIES", 5, "Tries an entry gets without an answer before it is "
        "moved to the dead-letter stream (`delivered_too_often`); a try that meets a Temporal "
        "outage counts none.")
    handler_timeout_s: float = env_field(
        "TOLLGATE_REDIS_HANDLER_TIMEOUT_S", 30.0,
        "Seconds one entry's intake may take before it counts as a failed delivery.")

    health_port: int | None = env_field(
        "TOLLGATE_REDIS_HEALTH_PORT", None,
        "Port the consumer process serves /livez, /readyz and /metrics on (the stream's lag; "
        "host TOLLGATE_HEALTH_HOST). Unset: none.")
    stall_s: float = env_field(
        "TOLLGATE_REDIS_STALL_SECONDS", 300.0,
        "The consumer's /readyz fails (503) once the oldest pending entry is older than this.")

    @field_validator("stream", "group", "dead_stream", "consumer", mode="before")
    @classmethod
    def _name(cls, raw: Any, info: ValidationInfo) -> Any:
        if raw is not None and not _NAME.fullmatch(str(raw)):
            raise ValueError(f"{cls.variable(str(info.field_name))} must be a plain name "
                             "(letters, digits, . _ : -)")
        return raw

    @model_validator(mode="after")
    def _timeout_below_claim(self) -> Self:
        # An intake still running when its entry turns claimable is taken over mid-way: the
        # second delivery is only a duplicate, but it spends one of the entry's tries.
        if self.handler_timeout_s >= self.claim_idle_s:
            raise ValueError("TOLLGATE_REDIS_HANDLER_TIMEOUT_S must be below "
                             "TOLLGATE_REDIS_CLAIM_IDLE_S")
        return self

    @field_validator("max_deliveries", mode="before")
    @classmethod
    def _count(cls, raw: Any) -> int:
        return whole_number(raw, "TOLLGATE_REDIS_MAX_DELIVERIES", lowest=1)

    @field_validator("claim_idle_s", "handler_timeout_s", "stall_s", mode="before")
    @classmethod
    def _positive(cls, raw: Any, info: ValidationInfo) -> float:
        return positive_number(raw, cls.variable(str(info.field_name)))

    @field_validator("health_port", mode="before")
    @classmethod
    def _health_port(cls, raw: Any) -> int | None:
        return None if raw is None else port_number(raw, "TOLLGATE_REDIS_HEALTH_PORT", lowest=1)
