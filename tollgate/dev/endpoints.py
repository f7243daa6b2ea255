"""What a started dev stack hands on: the addresses of what it started, as the environment of
the processes it starts (``stack_env``), as ``endpoints.json`` for another terminal
(``write_endpoints``; ``tollgate.config.settings`` reads it back), and the Web UI's address
for people (``ui_url``)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any, Protocol

from tollgate.codec.files import write_private
from tollgate.dev.stack_config import Ports
from tollgate.dev.standins import StandIns


class StartedStack(Protocol):
    """What these read of ``tollgate.dev.stack.DevStack`` (which imports this module)."""

    @property
    def state_dir(self) -> Path: ...
    @property
    def ports(self) -> Ports: ...
    @property
    def temporal_address(self) -> str | None: ...
    @property
    def database_url(self) -> str | None: ...
    @property
    def temporal_proc(self) -> subprocess.Popen[bytes] | None: ...
    @property
    def standins(self) -> StandIns | None: ...
    @property
    def codec(self) -> Any: ...
    @property
    def tenants_file(self) -> Path: ...
    def env_vars(self) -> dict[str, str]: ...


def ui_url(stack: StartedStack) -> str | None:
    return f"http://127.0.0.1:{stack.ports.ui}" if stack.temporal_proc else None


def stack_env(stack: StartedStack) -> dict[str, str]:
    assert stack.standins is not None and stack.database_url and stack.temporal_address
    return {
        **stack.env_vars(),
        "TEMPORAL_ADDRESS": stack.temporal_address, "DATABASE_URL": stack.database_url,
        "TOLLGATE_CRM_URL": stack.standins.crm_url,
        "TOLLGATE_MESSAGING_URL": stack.standins.messaging_url,
        "TOLLGATE_HELPDESK_URL": stack.standins.helpdesk_url,
        "TOLLGATE_TENANTS_FILE": str(stack.tenants_file),
    }


def write_endpoints(stack: StartedStack, *, serving: bool = False) -> None:
    """What another terminal needs; with ``serving``, also the HTTP service and metrics."""
    assert stack.standins is not None
    data = {
        "temporal_address": stack.temporal_address, "database_url": stack.database_url,
        "crm_url": stack.standins.crm_url, "messaging_url": stack.standins.messaging_url,
        "helpdesk_url": stack.standins.helpdesk_url, "tenants_file": str(stack.tenants_file),
        "ui": ui_url(stack), "codec_url": stack.codec.url if stack.codec is not None else None,
    } | ({"http_url": f"http://127.0.0.1:{stack.ports.http}", **{
        f"{name}_url": f"http://127.0.0.1:{getattr(stack.ports, name)}/metrics"
        for name in ("metrics", "sdk_metrics")}} if serving else {})
    write_private(stack.state_dir / "endpoints.json", json.dumps(data, indent=2))
