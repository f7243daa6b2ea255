"""`ops sweep` whose run's close the server did not notify to the result's long poll (ADR 0083):
it answers in seconds with the sweep's own report, as ever, and the operator is told on standard
error (``missed_close_notification``, the sweep's workflow id). Before, the wait was as quick
but said nothing, so a stall the server caused could not be told from a slow sweep. The missed
notification is made by ``tests/missed_close.py``, a stand-in at the client; the server, the
worker, the sweep and PostgreSQL are real."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest
from structlog.testing import capture_logs
from temporalio.testing import WorkflowEnvironment

from adapters.postgres.ops import OpsStore
from adapters.postgres.receipts import ReceiptStore
from tests.cli.helpers import run_ops
from tests.cli.unknown_write_support import open_write
from tests.conftest import worker_settings
from tests.missed_close import unheard_in_commands
from tollgate.dev.standins import StandIns
from tollgate.runtime.exits import Exit
from tollgate.runtime.workers import main_worker


async def test_a_sweep_whose_close_went_unheard_reports_and_says_so(
        fresh: tuple[str, ReceiptStore, OpsStore], dev_server: WorkflowEnvironment,
        standins: StandIns, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    url, receipts, _ = fresh
    s = worker_settings(url, standins, tmp_path, f"tq-{uuid.uuid4().hex[:8]}",
                        TEMPORAL_ADDRESS=dev_server.client.service_client.config.target_host)
    _, key = await open_write(receipts)  # the target never got it: it stays open

    missing = unheard_in_commands(monkeypatch)
    async with main_worker(dev_server.client, s):
        capsys.readouterr()
        with capture_logs() as logs:
            async with asyncio.timeout(15):
                code = await run_ops(["sweep"], s)
    assert missing.held["receipt-sweep-manual"].is_set()  # its close went unheard
    # The answer is the sweep's, unchanged: its one open receipt, exit 0.
    assert code == Exit.OK
    lines = capsys.readouterr().out.splitlines()
    assert ("1 receipt(s) checked: 0 settled (found at the target), 1 still open, "
            "0 missing at the target") in lines
    assert f"  open      {key}" in lines
    [line] = [e for e in logs if e["event"] == "missed_close_notification"]
    assert (line["log_level"], line["workflow_id"]) == ("warning", "receipt-sweep-manual")
    assert key not in str(line)  # the report stays out of the log
