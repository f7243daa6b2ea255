"""A deployed process that checks reviewers' tokens and was given no way to (no
``TOLLGATE_OIDC_ISSUER``, no dev key in its state folder) says so when it starts (ADR 0086).
``tollgate dev`` shares one state folder, and its dev key, among its processes; a deployment's
containers each have their own, so each made a key nobody signs with and refused every decision
without a word. Both shipped entry points run as processes against the real dev server,
PostgreSQL and the stand-ins: ``python worker.py`` and ``tollgate serve``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.eventually import eventually
from tests.faults.conftest import Rig
from tests.faults.process_faults_support import worker_process
from tests.ports import free_port
from tollgate.runtime.identity import dev_private_key

pytestmark = pytest.mark.e2e


def warnings(text: str) -> list[str]:
    events = []
    for line in text.splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            if record.get("level") == "warning":
                events.append(str(record.get("event")))
    return events


@pytest.mark.parametrize("dev_key", [False, True], ids=["no-key", "key"])
async def test_the_worker_script_says_when_no_reviewer_can_be_verified(
        rig: Rig, tmp_path: Path, dev_key: bool) -> None:
    folder = tmp_path / "worker"
    with worker_process(rig, folder, f"ident-{dev_key}", dev_key=dev_key):
        log = folder / "worker.log"
        await eventually(lambda: log.read_text() if log.exists() else "", "the worker's start",
                         until=lambda text: "worker running" in text, timeout=60)
    said = warnings(log.read_text())
    assert ("reviewer_identity_unset" in said) is not dev_key, said


def healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2):
            return True
    except OSError:
        return False


async def serve_warnings(rig: Rig, folder: Path, *args: str, **extra: str) -> list[str]:
    """``tollgate serve ARGS`` as a process with state folder ``folder`` until it answers
    ``/healthz``; the warnings it logged, after SIGTERM."""
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
    return warnings(err)


@pytest.mark.parametrize("dev_key", [False, True], ids=["no-key", "key"])
async def test_the_http_service_says_when_no_reviewer_can_be_verified(
        rig: Rig, tmp_path: Path, dev_key: bool) -> None:
    if dev_key:
        dev_private_key(tmp_path)
    said = await serve_warnings(rig, tmp_path)
    assert ("reviewer_identity_unset" in said) is not dev_key, said
