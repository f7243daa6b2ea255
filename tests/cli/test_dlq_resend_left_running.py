"""A replay cancelled during its one keyed resend ends at once: the run does not wait for the
activity it asks to stop (it ends cancelled, ADR 0077; before that it took the resend for one
that failed, wrote its dead letter again and ended ``stopped``), while the resend goes on in
its worker and may still reach the target, for up to its 30 s timeout. `ops dlq approve`,
`replay` and `close` took the closed run for "no replay in flight" and went ahead in that
window: a second replay's resend could run beside the first, or a close take the write off the
books as it landed. They now wait for the step the run left under way (ADR 0070)."""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from temporalio import activity
from temporalio.client import WorkflowExecutionStatus, WorkflowFailureError
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from adapters.postgres.ops import OpsStore
from adapters.postgres.receipts import ReceiptStore
from contracts import ReconcileRequest, ReconcileResult, target_task_queue
from contracts.actions import ReplayEnd
from tests.cli.dlq_support import replayable, settings
from tests.cli.helpers import run_ops
from tests.eventually import eventually
from tollgate.ops.replay_in_flight import run_in_flight
from tollgate.runtime.exits import Exit
from workflows.reconcile_write import ReconcileWriteWorkflow


class Steps:
    """The reconcile run's steps, standing in for the target's: no lookup (so the run goes
    straight to its resend), and a resend that runs until the test lets it finish."""

    def __init__(self) -> None:
        self.sending = asyncio.Event()
        self.release = asyncio.Event()
        self.sent_after_the_run_ended = False

    @activity.defn(name="lookup_write")
    async def lookup_write(self, request: ReconcileRequest) -> ReconcileResult | None:
        return ReconcileResult(status="unverifiable", reason_code="target_cannot_look_up")

    @activity.defn(name="resend_write")
    async def resend_write(self, request: ReconcileRequest) -> ReconcileResult:
        self.sending.set()
        await self.release.wait()
        self.sent_after_the_run_ended = True
        return ReconcileResult(status="resent")

    @activity.defn(name="dead_letter_write")
    async def dead_letter_write(self, request: ReconcileRequest) -> None:
        return None

    @activity.defn(name="record_replay_end")
    async def record_replay_end(self, end: ReplayEnd) -> None:
        return None


async def test_a_replay_cancelled_mid_resend_is_in_flight_until_the_resend_times_out(
        fresh: tuple[str, ReceiptStore, OpsStore], env: WorkflowEnvironment, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    url, receipts, ops = fresh
    s = settings(url, tmp_path, env.client.service_client.config.target_host)
    dl_id, key = await replayable(receipts, ops)
    assert await ops.approve_dead_letter(dl_id, actor="mai", reason="r")
    assert await ops.claim_replay(dl_id, actor="mai") == 1
    row = await ops.dead_letter_row(dl_id) or {}
    request = ReconcileRequest.model_validate(json.loads(row["replay_input"])).model_copy(
        update={"replay_of": dl_id})
    steps, queue = Steps(), f"rc-{uuid.uuid4().hex[:8]}"
    async with Worker(env.client, task_queue=queue, workflows=[ReconcileWriteWorkflow],
                      activities=[steps.dead_letter_write, steps.record_replay_end]), \
            Worker(env.client, task_queue=target_task_queue(queue, "messaging"),
                   activities=[steps.lookup_write, steps.resend_write]):
        run = await env.client.start_workflow(ReconcileWriteWorkflow.run, request,
                                              task_queue=queue, id=f"reconcile/{key}/replay-1")
        await eventually(steps.sending.is_set, "the resend is under way")
        await run.cancel()
        # The run does not wait for the resend it asked to stop: it ends cancelled (ADR 0077),
        # its dead letter REPLAYED, which approve and close would otherwise take as over.
        with pytest.raises(WorkflowFailureError):
            await run.result()
        described = await run.describe()
        closed = described.close_time
        assert described.status == WorkflowExecutionStatus.CANCELED
        assert closed is not None and not steps.sent_after_the_run_ended

        assert await run_ops(["dlq", "approve", str(dl_id), "--reason", "again"], s,
                             role="change_owner") == Exit.REFUSED
        said = capsys.readouterr().err
        assert f"dead letter {dl_id}: not approved: replay 1 ended (canceled) with its step " \
            f"resend_write under way, which may still reach the target until " in said
        assert await run_ops(["dlq", "close", str(dl_id), "--reason", "by phone"], s,
                             role="change_owner") == Exit.REFUSED
        assert (await ops.dead_letter_row(dl_id) or {})["approvals"] == 1  # nothing changed

        # The resend's 30 s (its start-to-close timeout), counted from the close: after it,
        # nothing of that run can still send.
        row = await ops.dead_letter_row(dl_id) or {}
        within = await run_in_flight(row, env.client, closed + timedelta(seconds=29))
        assert within is not None and f"until {closed + timedelta(seconds=30):%H:%M:%S} UTC" \
            in within
        assert await run_in_flight(row, env.client, closed + timedelta(seconds=31)) is None
        steps.release.set()
