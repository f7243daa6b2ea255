"""`tollgate ops status` names what failed when it cannot ask Temporal whether a worker polls:
no answer (`unreachable`), this terminal turned away (`refused`: PERMISSION_DENIED,
UNAUTHENTICATED, at connect or on the namespace's call), a namespace the server does not have
(`no namespace`), another status (`failing`). It called every one of them `unreachable`, whose
fix (start Temporal, or set TEMPORAL_ADDRESS) is wrong for all but the first. Each still exits 6
while events are open (docs/runbook.md, "ops status")."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from temporalio.testing import WorkflowEnvironment

from tests.cli.helpers import said_by
from tests.cli.ops_status_support import add_event
from tests.conftest import worker_settings
from tests.grpc_refusal import refusing
from tests.pg_databases import fresh_database
from tollgate.cli.ops import ops
from tollgate.config.settings import Settings
from tollgate.dev.standins import StandIns

pytestmark = pytest.mark.e2e


async def with_open_event(pg_server: str) -> str:
    url = await fresh_database(pg_server)
    conn = await asyncpg.connect(url)
    try:
        await add_event(conn, "acme", "AWAITING_REVIEW", timedelta(minutes=5), timedelta(hours=3))
    finally:
        await conn.close()
    return url


async def status_of(capsys: pytest.CaptureFixture[str], s: Settings
                    ) -> tuple[int, str, dict[str, Any]]:
    """The exit code and screen of `ops status`, and its --json report (same exit code)."""
    code, text = await said_by(capsys, s, ops, "status")
    json_code, report = await said_by(capsys, s, ops, "status", "--json")
    assert json_code == code, report
    return code, text, json.loads(report[report.index("{"):])


async def test_a_namespace_the_server_lacks_is_named_not_called_unreachable(
        dev_server: WorkflowEnvironment, pg_server: str, standins: StandIns, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    address = dev_server.client.service_client.config.target_host
    s = worker_settings(await with_open_event(pg_server), standins, tmp_path, "tq-status",
                        TEMPORAL_ADDRESS=address, TEMPORAL_NAMESPACE="no-such-ns")
    code, text, report = await status_of(capsys, s)
    where = f"Temporal at {address} has no namespace no-such-ns"
    assert code == 6, text
    assert report["workers"] == {"task_queue": "tq-status", "namespace": "no-such-ns",
                                 "state": "no namespace", "detail": where}
    why = (f"{where}: open events do not move there (set TEMPORAL_NAMESPACE to the workers' "
           "namespace)")
    assert report["needs_a_human"] == [why]
    assert f"workers: no namespace (task queue tq-status) · {where}" in text
    assert text.strip().splitlines()[-1] == f"needs a human: {why}"
    assert "unreachable" not in text


@pytest.mark.parametrize(("status", "code", "admit_first"), [
    (7, "PERMISSION_DENIED", False),  # turned away at connect (GetSystemInfo)
    (16, "UNAUTHENTICATED", False),
    (7, "PERMISSION_DENIED", True),  # connected, turned away on the namespace's call
])
async def test_a_refusal_is_named_with_its_status(
        pg_server: str, standins: StandIns, tmp_path: Path,
        capsys: pytest.CaptureFixture[str], status: int, code: str, admit_first: bool) -> None:
    url = await with_open_event(pg_server)
    async with refusing(status, "Request unauthorized.", admit_first=admit_first) as address:
        s = worker_settings(url, standins, tmp_path, "tq-status", TEMPORAL_ADDRESS=address)
        exit_code, text, report = await status_of(capsys, s)
    where = f"Temporal at {address} said {code} for namespace default"
    assert exit_code == 6, text
    assert report["workers"] == {"task_queue": "tq-status", "namespace": "default",
                                 "state": "refused", "detail": where}
    assert report["needs_a_human"] == [
        f"{where}: refused, open events may not move (check the credentials, TEMPORAL_API_KEY "
        "or the TLS client certificate, and their rights on the namespace)"]
    assert f"workers: refused (task queue tq-status) · {where}" in text
    assert "unreachable" not in text


async def test_another_status_is_failing_and_nothing_open_pages_nobody(
        pg_server: str, standins: StandIns, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    url = await fresh_database(pg_server)
    async with refusing(13, "boom", admit_first=True) as address:
        s = worker_settings(url, standins, tmp_path, "tq-status", TEMPORAL_ADDRESS=address)
        calm_code, calm_text, calm = await status_of(capsys, s)
        conn = await asyncpg.connect(url)
        try:
            await add_event(conn, "acme", "EXECUTING", timedelta(minutes=5))
        finally:
            await conn.close()
        code, text, report = await status_of(capsys, s)
    where = f"Temporal at {address} said INTERNAL"
    # No event open: nothing waits for Temporal, so nothing needs a human.
    assert (calm_code, calm["workers"]["state"], calm["needs_a_human"]) == (
        0, "failing", []), calm_text
    assert code == 6, text
    assert report["workers"]["detail"] == where
    assert report["needs_a_human"] == [
        f"{where}: open events may not move (the server's log says why)"]
