"""The reconciler's last look is at the end of the target's declared lookup window (ADR 0079).

The backoff looks at 0, 1, 3, 7, 15 s ...; with a 30 s window the next one (31 s) would pass
the window, and before this change the run stopped looking there: a write the target showed at
24 s, inside the window it declared, was taken for lost (resent, or dead-lettered). Now one
more look is made at the window's end, so every write visible within it is found; a write
never visible is declared after the window, not in its middle.

``TOLLGATE_RECORD_HISTORIES=PREFIX-`` writes each run's history under tests/replay/histories
(``pre-last-look-`` on the code before, ``last-look-`` after).
"""

from __future__ import annotations

from datetime import datetime, timedelta

import asyncpg
from temporalio import activity
from temporalio.client import WorkflowHandle
from temporalio.testing import WorkflowEnvironment

from adapters.ports.targets import TargetWrite
from adapters.postgres.receipts import ReceiptStore
from contracts import ReceiptStatus, ReconcileRequest, ReconcileResult
from tests.workflows.replay_run_support import Target, record, workers
from tests.workflows.unknown_write_support import unknown_write
from workflows.reconcile_write import ReconcileWriteWorkflow

WINDOW = timedelta(seconds=30)


class LateTarget(Target):
    """A target that can be looked up and shows the write only ``visible_after`` past the first
    look (None: never), on the server's clock, which the time-skipping server moves on."""

    def __init__(self, name: str, visible_after: timedelta | None, *, dedupes: bool) -> None:
        super().__init__(name, dedupes=dedupes, lookup=True)
        self.visible_after = visible_after
        self.looks: list[datetime] = []

    async def lookup(self, idempotency_key: str) -> TargetWrite | None:
        self.looks.append(activity.info().current_attempt_scheduled_time)
        seen = self.looks[-1] - self.looks[0]
        if self.visible_after is None or seen < self.visible_after:
            return await super().lookup(idempotency_key)
        return TargetWrite(idempotency_key=idempotency_key, external_id="ext-late")

    def offsets(self) -> list[int]:
        """When each look was made, in whole seconds after the first."""
        return [round((t - self.looks[0]).total_seconds()) for t in self.looks]


async def reconcile(env: WorkflowEnvironment, pool: asyncpg.Pool, target: LateTarget,
                    record_as: str) -> tuple[ReconcileResult, str, WorkflowHandle]:
    """One unknown write to ``target`` reconciled with its 30 s window, to its end."""
    ref, action = await unknown_write(ReceiptStore(pool), target.name)
    request = ReconcileRequest(ref=ref, action=action, lookup_window=WINDOW)
    async with workers(env, pool, target) as queue:
        run = await env.client.start_workflow(ReconcileWriteWorkflow.run, request,
                                              task_queue=queue, id=f"reconcile/{action.action_key}")
        result = await run.result()
        record(record_as, await run.fetch_history())
    return result, action.action_key, run


async def dead_letters(pool: asyncpg.Pool, key: str) -> list[str]:
    rows = await pool.fetch("SELECT error_code FROM dead_letters WHERE action_key = $1", key)
    return [r["error_code"] for r in rows]


async def test_a_write_visible_late_in_the_window_is_found_not_resent(
        env: WorkflowEnvironment, pool: asyncpg.Pool) -> None:
    """Visible at 0.8 x the window (24 s of 30): the code before looked last at 15 s and
    resent it (here refused, no token: dead-lettered); now the look at 30 s finds it."""
    target = LateTarget("late_visible", WINDOW * 0.8, dedupes=True)

    result, key, _ = await reconcile(env, pool, target, "reconcile_visible_late_in_window")

    assert (result.status, result.reason_code) == ("succeeded", "found_at_target")
    assert target.offsets() == [0, 1, 3, 7, 15, 30]
    assert target.calls == 0  # no resend
    receipt = await ReceiptStore(pool).get(key)
    assert receipt is not None and receipt.status == ReceiptStatus.SUCCEEDED
    assert receipt.external_id == "ext-late"
    assert await dead_letters(pool, key) == []


async def test_a_write_never_visible_is_declared_after_the_window(
        env: WorkflowEnvironment, pool: asyncpg.Pool) -> None:
    """Never shown, at a target that cannot dedupe: the dead letter as before, written once the
    window is over (the code before wrote it at 15 s of 30); the looks stop at its end."""
    target = LateTarget("never_visible", None, dedupes=False)

    result, key, run = await reconcile(env, pool, target, "reconcile_never_visible")

    assert (result.status, result.reason_code) == ("stopped", "unreconciled_write")
    assert target.offsets() == [0, 1, 3, 7, 15, 30]
    assert target.calls == 0
    assert await dead_letters(pool, key) == ["unreconciled_write"]
    described = await run.describe()
    assert described.close_time is not None
    assert described.close_time - described.start_time >= WINDOW
