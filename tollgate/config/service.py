"""The sections of the long-running services: the HTTP API, its identity provider, the broker
intake and the codec server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import SecretStr, ValidationInfo, field_validator

from tollgate.config.base import Section, comma_list, env_field, port_number, positive_number


class HttpSettings(Section):
    """``tollgate serve``: the intake and review API."""

    port: int = env_field("TOLLGATE_HTTP_PORT", 8400, "Port of `tollgate serve` (and of "
                          "`tollgate dev`'s HTTP service).")
    intake_rate: float = env_field("TOLLGATE_INTAKE_RATE", 50.0,
                                   "Events per second per tenant the intake accepts.")
    intake_burst: float = env_field("TOLLGATE_INTAKE_BURST", 200.0,
                                    "Burst above that rate per tenant.")
    max_body: float = env_field("TOLLGATE_MAX_BODY", 1_048_576,
                                "Largest request body accepted, in bytes.")
    relay_rate: float = env_field("TOLLGATE_RELAY_RATE", 50.0,
                                  "Outbox rows per second the relay starts as workflows.")
    relay_send_timeout_s: float = env_field(
        "TOLLGATE_RELAY_SEND_TIMEOUT_S", 15.0, "Seconds the relay waits for one row's start "
        "(an update-with-start answered once the run has validated the event) before it "
        "gives up on that try: an outage when no worker polls, else a try of the row's own.")
    outbox_stall_s: float = env_field(
        "TOLLGATE_OUTBOX_STALL_SECONDS", 300.0, "/healthz and /readyz fail (503) when the "
        "oldest unsent outbox row is older than this, in seconds.")
    notify_file: Path | None = env_field(
        "TOLLGATE_NOTIFY_FILE", None, "Reviewer notification channels per tenant (JSON). "
        "Unset: $TOLLGATE_STATE_DIR/notify.json.")
    public_url: str | None = env_field(
        "TOLLGATE_PUBLIC_URL", None, "URL reviewers' links point at. Unset: http://host:port.")

    @field_validator("port", mode="before")
    @classmethod
    def _port(cls, raw: Any) -> int:
        return port_number(raw, "TOLLGATE_HTTP_PORT")

    @field_validator("intake_rate", "intake_burst", "max_body", "relay_rate",
                     "relay_send_timeout_s", "outbox_stall_s", mode="before")
    @classmethod
    def _positive(cls, raw: Any, info: ValidationInfo) -> float:
        return positive_number(raw, cls.variable(str(info.field_name)))


class IdentitySettings(Section):
    """Who may decide: an OpenID provider, or the dev issuer when none is set."""

    issuer: str | None = env_field(
        "TOLLGATE_OIDC_ISSUER", None, "OpenID issuer of reviewers' tokens. Unset: the dev "
        "issuer (`tollgate dev token`).")
    audience: str | None = env_field("TOLLGATE_OIDC_AUDIENCE", None,
                                     "Audience the tokens must carry (needed with the issuer).")
    jwks_url: str | None = env_field(
        "TOLLGATE_OIDC_JWKS_URL", None, "The issuer's JWKS URL. Unset: found through the "
        "issuer's discovery document (`/.well-known/openid-configuration`).")
    jwks_cooldown_s: float = env_field(
        "TOLLGATE_OIDC_JWKS_COOLDOWN_S", 30.0, "Least seconds between two fetches of the "
        "issuer's keys that a token signed by an unknown key may cause (key rollover).")
    roles_claim: str = env_field("TOLLGATE_OIDC_ROLES_CLAIM", "roles", "Claim holding roles.")
    tenant_claim: str = env_field("TOLLGATE_OIDC_TENANT_CLAIM", "tenant",
                                  "Claim holding the tenant.")
    item_save_roles: tuple[str, ...] = env_field(
        "TOLLGATE_ITEM_SAVE_ROLES", ("reader", "reviewer", "care_lead"),
        "Roles that may save items to the content library, comma-separated (a viewer may not).")

    @field_validator("jwks_cooldown_s", mode="before")
    @classmethod
    def _cooldown(cls, raw: Any, info: ValidationInfo) -> float:
        return positive_number(raw, cls.variable(str(info.field_name)))

    @field_validator("item_save_roles", mode="before")
    @classmethod
    def _item_save_roles(cls, raw: Any) -> tuple[str, ...]:
        return comma_list(raw)


class BrokerSettings(Section):
    """The RabbitMQ intake (``python -m tollgate.intake.broker``) and, on a worker, the
    consumers' dead-letter queues (docs/fan-out.md, "Broker")."""

    amqp_url: SecretStr | None = env_field(
        "TOLLGATE_AMQP_URL", None, "amqp://user:pass@host:5672/ (masked: it carries a password). "
        "On a worker: each fan-out consumer's dead letter is also put on its "
        "<consumer>.<event>.dlq queue; unset, PostgreSQL alone keeps it.")


class CodecSettings(Section):
    """Payload encryption keys and the codec server the Web UI decodes through."""

    keys: SecretStr | None = env_field(
        "TOLLGATE_KEYS", None, "The payload key ring as JSON (beats TOLLGATE_KEYS_FILE).")
    #: The same variable as the root's state_dir, unresolved: the key ring's default folder.
    state_dir: Path = env_field("TOLLGATE_STATE_DIR", Path(".tollgate"),
                                "Folder of the dev stack's state (keys, tenants, endpoints).")
    keys_file: Path | None = env_field(
        "TOLLGATE_KEYS_FILE", None,
        "File holding the key ring. Unset: $TOLLGATE_STATE_DIR/keys.json.")
    token: SecretStr | None = env_field(
        "TOLLGATE_CODEC_TOKEN", None, "Bearer token the Web UI sends to the codec server "
        "(16+ characters; required by `python -m tollgate.codec.server`).")
    host: str = env_field("TOLLGATE_CODEC_HOST", "127.0.0.1",
                          "Address `python -m tollgate.codec.server` binds.")
    port: int = env_field("TOLLGATE_CODEC_PORT", 8081,
                          "Port of `python -m tollgate.codec.server`. `tollgate dev` ignores "
                          "it: its codec server takes a free port, printed at start and in "
                          "endpoints.json.")
    origins: tuple[str, ...] = env_field(
        "TOLLGATE_CODEC_ORIGINS", (), "Web UI origins allowed by CORS, comma-separated.")
    url: str | None = env_field(
        "TOLLGATE_CODEC_URL", None, "Where an operator's terminal reaches the codec server "
        "(`tollgate ops status` probes it). Unset: the running `tollgate dev`'s, from "
        "endpoints.json; neither: not probed.")

    @field_validator("port", mode="before")
    @classmethod
    def _port(cls, raw: Any) -> int:
        return port_number(raw, "TOLLGATE_CODEC_PORT", lowest=1)

    @property
    def keys_path(self) -> Path:
        """Where the key ring file is (or would be made)."""
        return self.keys_file or self.state_dir / "keys.json"

    @field_validator("origins", mode="before")
    @classmethod
    def _origins(cls, raw: Any) -> tuple[str, ...]:
        return comma_list(raw)
