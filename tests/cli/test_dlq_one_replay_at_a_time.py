"""One replay of a dead letter at a time (ADR 0066): `ops dlq approve` and `ops dlq replay`
refuse while an earlier replay of the same dead letter may still send, as `ops dlq close` does.
Before, a REPLAYED dead letter could be approved and replayed again beside its running replay,
and the first of the two to stop reopened it while the other still ran."""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.client import WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode
from temporalio.testing import WorkflowEnvironment

from adapters.postgres.ops import OpsStore
from adapters.postgres.receipts import ReceiptStore
from tests.cli.dlq_support import replayable, settings
from tests.cli.helpers import run_ops
from tollgate.runtime.exits import Exit

WHY = ["--reason", "the target is back"]


async def test_approve_and_replay_wait_for_the_running_replay(
        fresh: tuple[str, ReceiptStore, OpsStore], env: WorkflowEnvironment, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    url, receipts, ops = fresh
    s = settings(url, tmp_path, env.client.service_client.config.target_host)
    dl_id, key = await replayable(receipts, ops)
    approve = ["dlq", "approve", str(dl_id), *WHY]
    replay = ["dlq", "replay", str(dl_id)]
    assert await run_ops(approve, s, role="change_owner") == Exit.OK
    assert await ops.claim_replay(dl_id, actor="mai") == 1

    # Claimed, its run not started yet: the command that claimed it is about to start it.
    assert await run_ops(approve, s, role="change_owner") == Exit.REFUSED
    assert f"dead letter {dl_id}: not approved: replay 1 was claimed 0 min ago and its run " \
        f"reconcile/{key}/replay-1 has not started yet" in capsys.readouterr().err

    # Started: no worker polls its queue, so it runs until it is ended.
    run = await env.client.start_workflow("ReconcileWriteWorkflow", id=f"reconcile/{key}/"
                                          "replay-1", task_queue=f"nobody-{dl_id}")
    assert await run_ops(approve, s, role="change_owner") == Exit.REFUSED
    said = capsys.readouterr().err.strip().splitlines()
    assert said == [f"tollgate: dead letter {dl_id}: not approved: replay 1 is still running "
                    f"(reconcile/{key}/replay-1); try again once it ended (tollgate ops state "
                    f"reconcile/{key}/replay-1)"]
    row = await ops.dead_letter_row(dl_id) or {}
    assert (row["status"], row["approvals"], row["replays"]) == ("REPLAYED", 1, 1)

    # An approval given beside it all the same (before approve waited): replay still waits,
    # and no second run starts.
    assert await ops.approve_dead_letter(dl_id, actor="mai", reason="r")
    assert await run_ops(replay, s, role="on_call") == Exit.REFUSED
    assert f"dead letter {dl_id}: not replayed: replay 1 is still running " \
        f"(reconcile/{key}/replay-1)" in capsys.readouterr().err
    row = await ops.dead_letter_row(dl_id) or {}
    assert (row["status"], row["approvals"], row["replays"]) == ("APPROVED", 2, 1)
    with pytest.raises(RPCError) as unknown:
        await env.client.get_workflow_handle(f"reconcile/{key}/replay-2").describe()
    assert unknown.value.status == RPCStatusCode.NOT_FOUND

    # Temporal not answering: nobody can say the replay ended, so nothing is changed (exit 3).
    away = settings(url, tmp_path)
    assert await run_ops(approve, away, role="change_owner") == Exit.UNREACHABLE
    assert await run_ops(replay, away, role="on_call") == Exit.UNREACHABLE
    assert (await ops.dead_letter_row(dl_id) or {})["approvals"] == 2

    await run.terminate("the test")
    assert (await run.describe()).status == WorkflowExecutionStatus.TERMINATED
    assert await run_ops(approve, s, role="change_owner") == Exit.OK
    assert (await ops.dead_letter_row(dl_id) or {})["approvals"] == 3


async def test_a_claim_judged_on_an_older_replay_loses(
        fresh: tuple[str, ReceiptStore, OpsStore]) -> None:
    _, receipts, ops = fresh
    dl_id, _ = await replayable(receipts, ops)
    for _ in range(2):
        assert await ops.approve_dead_letter(dl_id, actor="mai", reason="r")
    # Two replay commands judged replay 0 ended; the second to claim finds replay 1 claimed.
    assert await ops.claim_replay(dl_id, actor="mai", replays=0) == 1
    assert await ops.claim_replay(dl_id, actor="kim", replays=0) is None
    # An approval judged on no replay loses to the claim made since.
    assert not await ops.approve_dead_letter(dl_id, actor="mai", reason="r", replays=0)
    row = await ops.dead_letter_row(dl_id) or {}
    assert (row["status"], row["approvals"], row["replays"]) == ("REPLAYED", 2, 1)
