"""`ops dlq replay` connects to Temporal once: the one client asks whether the dead letter's
earlier replay still runs (ADR 0066) and starts this one. It connected twice (a second
connection, codec and all, for the start), and with no earlier replay it connected only after
claiming the approval, so a Temporal that did not answer used up the approval for a replay
that never started; now it is exit 3 with the approval still there."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.testing import WorkflowEnvironment

import tollgate.runtime.client
from adapters.postgres.ops import OpsStore
from adapters.postgres.receipts import ReceiptStore
from tests.cli.dlq_support import replayable, settings
from tests.cli.helpers import run_ops
from tests.eventually import eventually
from tollgate.runtime.exits import Exit


async def test_a_replay_asks_and_starts_over_one_connection(
        fresh: tuple[str, ReceiptStore, OpsStore], env: WorkflowEnvironment, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    url, receipts, ops = fresh
    s = settings(url, tmp_path, env.client.service_client.config.target_host)
    dl_id, key = await replayable(receipts, ops)
    # Replay 1 ran and ended (terminated): replay 2's command asks Temporal about it first.
    assert await ops.approve_dead_letter(dl_id, actor="mai", reason="r")
    assert await ops.claim_replay(dl_id, actor="mai") == 1
    first = await env.client.start_workflow("ReconcileWriteWorkflow", id=f"reconcile/{key}/"
                                            "replay-1", task_queue=f"nobody-{dl_id}")
    await first.terminate("the test")
    assert await ops.approve_dead_letter(dl_id, actor="mai", reason="r")

    built = tollgate.runtime.client.build_client
    connects = 0

    async def counted(*args: Any, **kwargs: Any) -> Client:
        nonlocal connects
        connects += 1
        return await built(*args, **kwargs)

    monkeypatch.setattr(tollgate.runtime.client, "build_client", counted)
    # No worker polls the queue: the command waits on replay 2 until the test ends it.
    command = asyncio.create_task(run_ops(["dlq", "replay", str(dl_id)], s, role="on_call"))
    second = env.client.get_workflow_handle(f"reconcile/{key}/replay-2")
    await eventually(second.describe, "replay 2 started", ignoring=(Exception,))
    assert connects == 1
    await second.terminate("the test")
    # The command heard its run end: terminated, one line (9f64abd), exit 1.
    assert await command == Exit.REFUSED
    assert (await second.describe()).status == WorkflowExecutionStatus.TERMINATED
    assert connects == 1


async def test_temporal_away_uses_no_approval(
        fresh: tuple[str, ReceiptStore, OpsStore], tmp_path: Path) -> None:
    url, receipts, ops = fresh
    dl_id, _ = await replayable(receipts, ops)
    assert await ops.approve_dead_letter(dl_id, actor="mai", reason="r")
    # Never replayed: nothing to ask Temporal about, but this replay's start needs it.
    assert await run_ops(["dlq", "replay", str(dl_id)], settings(url, tmp_path),
                         role="on_call") == Exit.UNREACHABLE
    row = await ops.dead_letter_row(dl_id) or {}
    assert (row["status"], row["approvals"], row["replays"]) == ("APPROVED", 1, 0)
