"""``tollgate serve`` as a process for the deployment tests, and the warnings it logged."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

from tests.eventually import eventually
from tests.faults.conftest import Rig
from tests.ports import free_port


def warnings(text: str) -> list[str]:
    events = []
    for line in text.splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            if record.get("level") == "warning":
                events.append(str(record.get("event")))
    return events


def healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2):
            return True
    except OSError:
        return False


async def serve_warnings(rig: Rig, folder: Path, *args: str, **extra: str) -> list[str]:
    """``tollgate serve ARGS`` as a process with state folder ``folder`` until it answers
    ``/healthz``; the warnings it logged, after SIGTERM, then ``exit N``, how it ended."""
    port = free_port()
    s = rig.settings
    env = {**os.environ, "TEMPORAL_ADDRESS": s.temporal_address, "DATABASE_URL": s.dsn or "",
           "TOLLGATE_TENANTS_FILE": str(s.tenants_file), "TOLLGATE_STATE_DIR": str(folder),
           "TOLLGATE_KEYS_FILE": s.env["TOLLGATE_KEYS_FILE"], **extra}
    for unset in ("TOLLGATE_OIDC_ISSUER", "TOLLGATE_PUBLIC_URL", "TOLLGATE_NOTIFY_FILE"):
        if unset not in extra:
            env.pop(unset, None)
    tollgate = str(Path(sys.executable).parent / "tollgate")
    proc = subprocess.Popen([tollgate, "serve", "--port", str(port), *args],  # noqa: S603
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    try:
        await eventually(lambda: healthy(port), "the HTTP service", timeout=60)
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    return [*warnings(err), f"exit {proc.returncode}"]
