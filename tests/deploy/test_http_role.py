"""``tollgate serve`` as the ``http`` role runs it (``--host 0.0.0.0``), against the real dev
server and PostgreSQL: what ``tollgate dev`` has by design (notices in a local file, links to
its loopback address) a deployment would have had without a word; it says so at start (ADR
0086)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.deploy.serve_support import serve_warnings
from tests.faults.conftest import Rig
from tollgate.runtime.identity import dev_private_key

pytestmark = pytest.mark.e2e
UNREACHED = {"reviewer_notices_local_only", "reviewer_links_unreachable"}


async def test_the_http_role_says_when_reviewers_would_hear_nothing(rig: Rig,
                                                                    tmp_path: Path) -> None:
    dev_private_key(tmp_path)
    said = await serve_warnings(rig, tmp_path, "--host", "0.0.0.0")  # noqa: S104 - the role's
    assert set(said) >= UNREACHED, said


async def test_a_notify_file_and_a_public_url_leave_it_quiet(rig: Rig, tmp_path: Path) -> None:
    dev_private_key(tmp_path)
    notify = tmp_path / "channels.json"
    notify.write_text(json.dumps({"acme": {"slack_webhook": "http://127.0.0.1:9/hook"}}))
    said = await serve_warnings(rig, tmp_path, "--host", "0.0.0.0",  # noqa: S104
                                TOLLGATE_NOTIFY_FILE=str(notify),
                                TOLLGATE_PUBLIC_URL="https://tollgate.example.com")
    assert not UNREACHED & set(said), said


async def test_sigterm_stops_the_http_role_cleanly(rig: Rig, tmp_path: Path) -> None:
    """What Kubernetes and compose send: the service, its relay and its notifier stop, and the
    process exits 0 (it used to end by the signal itself, 143, with none of them stopped)."""
    dev_private_key(tmp_path)
    said = await serve_warnings(rig, tmp_path, "--host", "0.0.0.0")  # noqa: S104
    assert said[-1] == "exit 0", said
