"""A dead letter's replay cancelled during its one keyed resend ends cancelled (ADR 0077).

Before, the run took the cancelled resend for one that failed: it wrote its dead letter again
(reopened, OPEN, back in the operator's queue, "approve to replay again") and ended
``stopped``, while the resend went on at the target (ADR 0070). Now it ends CANCELED, writes
nothing but its end (``cancelled``, ADR 0069), and leaves the dead letter as the replay left
it: REPLAYED, its write still unknown. A run from before the change replays as it ran.

``TOLLGATE_RECORD_HISTORIES=PREFIX-`` writes the run's history under tests/replay/histories
(``pre-resend-cancel-`` on the code before, ``resend-cancel-`` after).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg
from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowHandle,
    WorkflowHistory,
)
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Replayer

from adapters.ports.targets import TargetWrite
from adapters.postgres.ops import OpsStore
from contracts import ActionRequest
from tests.conftest import CONVERTER
from tests.eventually import eventually
from tests.workflows.replay_run_support import (
    HISTORIES,
    Target,
    claimed_replay,
    ends,
    record,
    workers,
)
from tollgate.ops.actions import replay_dead_letter
from tollgate.runtime.exits import Exit
from workflows.reconcile_write import ReconcileWriteWorkflow

HISTORY = "reconcile_replay_cancelled_mid_resend"


class HeldTarget(Target):
    """A target that dedupes by key and cannot be looked up, so the replay goes straight to
    its resend, which it holds until the test lets it go."""

    def __init__(self, name: str) -> None:
        super().__init__(name, dedupes=True)
        self.sending = asyncio.Event()
        self.release = asyncio.Event()

    async def execute(self, request: ActionRequest) -> TargetWrite:
        self.sending.set()
        await self.release.wait()
        return await super().execute(request)


async def receipt_status(pool: asyncpg.Pool, action_key: str) -> str:
    return str(await pool.fetchval("SELECT status FROM receipts WHERE action_key = $1",
                                   action_key))


async def test_a_replay_cancelled_mid_resend_ends_cancelled_and_leaves_its_dead_letter(
        env: WorkflowEnvironment, pool: asyncpg.Pool) -> None:
    target = HeldTarget("replay_cancel")
    dl_id, request = await claimed_replay(pool, target)
    key = request.action.action_key
    async with workers(env, pool, target) as queue:
        run = await env.client.start_workflow(ReconcileWriteWorkflow.run, request,
                                              task_queue=queue, id=f"reconcile/{key}/replay-1")
        await eventually(target.sending.is_set, "the resend is at the target")
        under_way = await receipt_status(pool, key)
        await run.cancel()
        with contextlib.suppress(WorkflowFailureError):  # the code before returned `stopped`
            await run.result()
        record(HISTORY, await run.fetch_history())

        assert (await run.describe()).status == WorkflowExecutionStatus.CANCELED
        row = await pool.fetchrow("SELECT status, approvals, replays FROM dead_letters"
                                  " WHERE id = $1", dl_id)
        assert dict(row or {}) == {"status": "REPLAYED", "approvals": 1, "replays": 1}
        # Nothing new in the operator's queue: no dead letter reopened or written for the key.
        assert await pool.fetchval(
            "SELECT count(*) FROM dead_letters WHERE action_key = $1 AND status = 'OPEN'",
            key) == 0
        assert await pool.fetchval("SELECT count(*) FROM audit WHERE action = 'dlq_reopen'"
                                   " AND target = $1", f"dead_letter/{dl_id}") == 0
        assert await ends(pool, dl_id) == [("op.kim", {"replay": 1, "result": "cancelled"})]
        assert await receipt_status(pool, key) == under_way == "UNKNOWN"
        # The resend the run asked to stop goes on (ADR 0070) and, landing, settles the write
        # as any replay's resend does; the dead letter is still the replay's.
        target.release.set()
        await eventually(lambda: receipt_status(pool, key), "the late resend's settle",
                         until=lambda status: status == "SUCCEEDED")
        assert await pool.fetchval("SELECT status FROM dead_letters WHERE id = $1",
                                   dl_id) == "REPLAYED"


async def run_cut_short(env: WorkflowEnvironment, pool: asyncpg.Pool, name: str,
                        cut: Callable[[WorkflowHandle[Any, Any]], Awaitable[None]],
                        ) -> tuple[int, tuple[Exit, str]]:
    """`tollgate ops dlq replay` waiting on a replay that ``cut`` ends during its resend: the
    dead letter's id and what the command answered."""
    target = HeldTarget(name)
    dl_id, request = await claimed_replay(pool, target, claim=False)
    row = await OpsStore(pool).dead_letter_row(dl_id) or {}

    async def connect() -> Client:
        return env.client

    async with workers(env, pool, target) as queue:
        command = asyncio.create_task(replay_dead_letter(pool, row, "op.kim", connect, queue))
        await eventually(target.sending.is_set, "the resend is at the target")
        await cut(env.client.get_workflow_handle(
            f"reconcile/{request.action.action_key}/replay-1"))
        answered = await command
        target.release.set()
    return dl_id, answered


async def test_the_replay_command_says_its_run_was_cancelled(
        env: WorkflowEnvironment, pool: asyncpg.Pool) -> None:
    """`tollgate ops dlq replay` waiting on the run hears the cancel: one line, exit 1, not
    an unexpected error (the run's end is a cancel now, not `stopped`)."""
    dl_id, answered = await run_cut_short(env, pool, "replay_cancel_command",
                                          lambda run: run.cancel())
    assert answered == (
        Exit.REFUSED, f"replay 1 of dead letter {dl_id}: cancelled; dead letter {dl_id} "
        f"left REPLAYED, its write unknown: `tollgate ops dlq show {dl_id}`")
    assert await ends(pool, dl_id) == [("op.kim", {"replay": 1, "result": "cancelled"})]


async def test_the_replay_command_says_its_run_was_terminated(
        env: WorkflowEnvironment, pool: asyncpg.Pool) -> None:
    """A run ended by hand with no result (`temporal workflow terminate`) is heard in one line,
    exit 1, as a cancel is: before, the command ended on an unexpected WorkflowFailureError
    (exit 9, "a bug")."""
    dl_id, answered = await run_cut_short(env, pool, "replay_terminate_command",
                                          lambda run: run.terminate("by hand"))
    assert answered == (
        Exit.REFUSED, f"replay 1 of dead letter {dl_id}: the run was terminated, no result: "
        f"`tollgate ops dlq show {dl_id}`")


def test_a_run_from_before_the_change_replays_its_old_end() -> None:
    """The committed run cancelled mid-resend on the code before: it wrote its dead letter
    again after the cancel and completed. The current code replays it without a mismatch."""
    path = HISTORIES / f"pre-resend-cancel-{HISTORY}.json"
    events = json.loads(path.read_text())["events"]
    kinds = [e["eventType"] for e in events]
    cancelled = kinds.index("EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED")
    scheduled = [e["activityTaskScheduledEventAttributes"]["activityType"]["name"]
                 for e in events[cancelled:] if "activityTaskScheduledEventAttributes" in e]
    assert scheduled == ["dead_letter_write", "record_replay_end"]
    assert kinds[-1] == "EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED"

    asyncio.run(Replayer(workflows=[ReconcileWriteWorkflow], data_converter=CONVERTER)
                .replay_workflow(WorkflowHistory.from_json(path.stem, path.read_text())))
