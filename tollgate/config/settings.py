"""Settings: one pydantic-settings object, read from the environment (never at import time).

Precedence: environment variables, then the endpoints file a running ``tollgate dev`` writes
(``.tollgate/endpoints.json``), then defaults. The database URL may carry a password, so it is a
``SecretStr``: it never shows in a repr, a log line or an error message.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from pydantic import AliasChoices, Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

DEFAULT_TASK_QUEUE = "tollgate"
_MAPPING_ONLY: ContextVar[bool] = ContextVar("tollgate_settings_mapping_only", default=False)
DEFAULT_TEMPORAL_ADDRESS = "127.0.0.1:7233"


class Settings(BaseSettings):
    """Where the servers are and which queue to use. ``Settings()`` reads ``os.environ``;
    ``Settings.from_env(mapping)`` reads only the mapping (tests, child processes)."""

    model_config = SettingsConfigDict(frozen=True, extra="ignore", populate_by_name=True)

    state_dir: Path = Field(Path(".tollgate"), validation_alias=AliasChoices("TOLLGATE_STATE_DIR",
                                                                           "state_dir"))
    temporal_address: str = Field(DEFAULT_TEMPORAL_ADDRESS, validation_alias=AliasChoices(
        "TEMPORAL_ADDRESS", "temporal_address"))
    namespace: str = Field("default", validation_alias=AliasChoices("TEMPORAL_NAMESPACE",
                                                                    "namespace"))
    database_url: SecretStr | None = Field(None, validation_alias=AliasChoices(
        "DATABASE_URL", "database_url"))
    task_queue: str = Field(DEFAULT_TASK_QUEUE, validation_alias=AliasChoices(
        "TOLLGATE_TASK_QUEUE", "task_queue"))
    crm_url: str | None = Field(None, validation_alias=AliasChoices("TOLLGATE_CRM_URL",
                                                                    "crm_url"))
    messaging_url: str | None = Field(None, validation_alias=AliasChoices(
        "TOLLGATE_MESSAGING_URL", "messaging_url"))
    tenants_file: Path | None = Field(None, validation_alias=AliasChoices(
        "TOLLGATE_TENANTS_FILE", "tenants_file"))
    #: The whole environment it was read from: the model settings (``DraftSettings``) read it.
    env: Mapping[str, str] = Field(default_factory=dict, repr=False, exclude=True)

    @model_validator(mode="before")
    @classmethod
    def _fill_from_running_stack(cls, data: Any) -> Any:
        """Unset endpoints come from the file a running ``tollgate dev`` wrote."""
        if not isinstance(data, dict):
            return data
        data = {k: v for k, v in data.items() if v not in (None, "")}
        state_dir = Path(data.get("TOLLGATE_STATE_DIR") or data.get("state_dir")
                         or ".tollgate").resolve()
        data["state_dir"] = state_dir
        data.pop("TOLLGATE_STATE_DIR", None)
        running = read_endpoints(state_dir)
        for env_name, key in (("TEMPORAL_ADDRESS", "temporal_address"),
                              ("DATABASE_URL", "database_url"), ("TOLLGATE_CRM_URL", "crm_url"),
                              ("TOLLGATE_MESSAGING_URL", "messaging_url"),
                              ("TOLLGATE_TENANTS_FILE", "tenants_file")):
            if env_name not in data and key not in data and running.get(key):
                data[key] = running[key]
        if "TOLLGATE_TENANTS_FILE" not in data and "tenants_file" not in data:
            data["tenants_file"] = state_dir / "tenants.json"
        return data

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Settings from ``env`` only (``os.environ`` when None), never from anything else."""
        env = dict(os.environ if env is None else env)
        token = _MAPPING_ONLY.set(True)
        try:
            # Names starting with "_" are pydantic-settings' own init options: never pass those.
            values: dict[str, Any] = {k: v for k, v in env.items() if not k.startswith("_")}
            return cls(**values, env=env)
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
        return (init_settings, env_settings)

    @property
    def dsn(self) -> str | None:
        """The database URL in clear, for the connection call only."""
        return self.database_url.get_secret_value() if self.database_url else None

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


def read_endpoints(state_dir: Path) -> dict[str, str]:
    path = state_dir / "endpoints.json"
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text())
    except ValueError:
        return {}
    return {k: v for k, v in data.items() if isinstance(v, str)} if isinstance(data, dict) else {}
