"""`ops dlq replay` hears its run's end within seconds even when the server does not notify the
result's long poll of the close (ADR 0083). It waited with a bare ``result()``: an operator would
have sat 20 s (the poll's expiry) on a replay that had long ended. The missed notification is
made by ``tests/missed_close.py``, a stand-in at the client; the server, the run and its end are
the real dev server's. The operator is told of the missed close on standard error
(``missed_close_notification``), though the replay's run ended with no result."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from structlog.testing import capture_logs
from temporalio.client import WorkflowExecutionStatus
from temporalio.testing import WorkflowEnvironment

from adapters.postgres.ops import OpsStore
from adapters.postgres.receipts import ReceiptStore
from tests.cli.dlq_support import replayable, settings
from tests.cli.helpers import run_ops
from tests.eventually import eventually
from tests.missed_close import unheard_in_commands
from tollgate.runtime.exits import Exit


async def test_a_replay_whose_close_went_unheard_answers_in_seconds(
        fresh: tuple[str, ReceiptStore, OpsStore], dev_server: WorkflowEnvironment,
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    url, receipts, ops = fresh
    s = settings(url, tmp_path, dev_server.client.service_client.config.target_host)
    dl_id, key = await replayable(receipts, ops)
    assert await ops.approve_dead_letter(dl_id, actor="mai", reason="r")

    missing = unheard_in_commands(monkeypatch)
    # No worker polls the queue: the run waits until the test ends it.
    with capture_logs() as logs:
        command = asyncio.create_task(run_ops(["dlq", "replay", str(dl_id)], s,
                                              role="on_call"))
        run_id = f"reconcile/{key}/replay-1"
        await eventually(lambda: missing.held.get(run_id), "the command waits on replay 1")
        await dev_server.client.get_workflow_handle(run_id).terminate("the test")
        # Before, the command waited on the poll that was never told (here: for ever).
        async with asyncio.timeout(10):
            assert await command == Exit.REFUSED
    # The run's re-read raised (terminated): the wait still says its close went unheard.
    assert [e["workflow_id"] for e in logs if e["event"] == "missed_close_notification"] \
        == [run_id]
    assert missing.held[run_id].is_set()
    assert (await dev_server.client.get_workflow_handle(run_id).describe()).status \
        == WorkflowExecutionStatus.TERMINATED
    said = capsys.readouterr()
    assert f"replay 1 of dead letter {dl_id}: the run was terminated, no result" \
        in said.out + said.err
