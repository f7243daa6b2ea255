"""Settings, read from an explicit environment mapping (never at import time).

Precedence: environment variables, then the endpoints file a running ``tollgate dev`` writes
(``.tollgate/endpoints.json``), then defaults. Secrets are never part of a repr.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_TASK_QUEUE = "tollgate"


@dataclass(frozen=True)
class Settings:
    state_dir: Path
    temporal_address: str
    namespace: str
    database_url: str | None
    task_queue: str
    crm_url: str | None
    messaging_url: str | None
    tenants_file: Path
    env: Mapping[str, str] = field(repr=False, default_factory=dict)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = dict(os.environ if env is None else env)
        state_dir = Path(env.get("TOLLGATE_STATE_DIR", ".tollgate")).resolve()
        running = read_endpoints(state_dir)
        return cls(
            state_dir=state_dir,
            temporal_address=env.get("TEMPORAL_ADDRESS") or running.get("temporal_address")
            or "127.0.0.1:7233",
            namespace=env.get("TEMPORAL_NAMESPACE", "default"),
            database_url=env.get("DATABASE_URL") or running.get("database_url"),
            task_queue=env.get("TOLLGATE_TASK_QUEUE", DEFAULT_TASK_QUEUE),
            crm_url=env.get("TOLLGATE_CRM_URL") or running.get("crm_url"),
            messaging_url=env.get("TOLLGATE_MESSAGING_URL") or running.get("messaging_url"),
            tenants_file=Path(env.get("TOLLGATE_TENANTS_FILE")
                              or running.get("tenants_file") or state_dir / "tenants.json"),
            env=env,
        )

    def tenant_secrets(self) -> dict[str, str]:
        """Tenant id -> HMAC secret, from ``TOLLGATE_TENANTS_FILE`` (``{"acme": "secret"}``)."""
        if not self.tenants_file.exists():
            raise SystemExit(f"tenants file not found: {self.tenants_file} "
                             "(run `tollgate dev` once, or set TOLLGATE_TENANTS_FILE)")
        data = json.loads(self.tenants_file.read_text())
        if not isinstance(data, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in data.items()
        ):
            raise SystemExit(f"{self.tenants_file}: expected a JSON object of tenant -> secret")
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
