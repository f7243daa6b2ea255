"""A deployed process that checks reviewers' tokens and was given no way to (no
``TOLLGATE_OIDC_ISSUER``, no dev key in its state folder) says so when it starts (ADR 0086).
``tollgate dev`` shares one state folder, and its dev key, among its processes; a deployment's
containers each have their own, so each made a key nobody signs with and refused every decision
without a word. Both shipped entry points run as processes against the real dev server,
PostgreSQL and the stand-ins: ``python worker.py`` and ``tollgate serve``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.deploy.serve_support import serve_warnings, warnings
from tests.eventually import eventually
from tests.faults.conftest import Rig
from tests.faults.process_faults_support import worker_process
from tollgate.runtime.identity import dev_private_key

pytestmark = pytest.mark.e2e


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


@pytest.mark.parametrize("dev_key", [False, True], ids=["no-key", "key"])
async def test_the_http_service_says_when_no_reviewer_can_be_verified(
        rig: Rig, tmp_path: Path, dev_key: bool) -> None:
    if dev_key:
        dev_private_key(tmp_path)
    said = await serve_warnings(rig, tmp_path)
    assert ("reviewer_identity_unset" in said) is not dev_key, said
