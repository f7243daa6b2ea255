"""``tollgate bench --replay``: how fast the current workflow code replays histories, as a
worker does after an eviction or a restart, and as ``tests/replay`` does before a release.

Two sets: the committed histories (``tests/replay/histories``, sealed with the committed test
key ring; replayed several times over, since there are few) and up to ``RUN_HISTORIES``
``ProcessEvent`` histories the run itself recorded (sealed with the stack's own ring). Each set
is replayed with two sandboxes: the SDK's default, and the worker's own (workflow modules
passed through, ``tollgate.runtime.workers``). Time and CPU are this process's: nothing else
runs then.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import Any

from temporalio.client import Client, WorkflowHistory
from temporalio.converter import DataConverter
from temporalio.worker import Replayer
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from tollgate.codec.payload import encrypted_data_converter, load_key_ring
from tollgate.config.service import CodecSettings
from workflows.fan_out import ConsumeEventWorkflow, FanOutWorkflow
from workflows.process_event import ProcessEventWorkflow
from workflows.reconcile_write import ReconcileWriteWorkflow
from workflows.sweep import ReceiptSweepWorkflow
from workflows.tag_item import TagItemWorkflow

WORKFLOWS = [ProcessEventWorkflow, ReconcileWriteWorkflow, ReceiptSweepWorkflow,
             TagItemWorkflow, FanOutWorkflow, ConsumeEventWorkflow]
RUN_HISTORIES = 1000
#: Histories replayed at once, each stream through the same ``Replayer`` (``replay_speed``).
REPLAY_STREAMS = 4
#: Replays of the committed set at least (passes over it, rounded up).
COMMITTED_REPLAYS = 200
_TESTS = Path(__file__).resolve().parents[2] / "tests"
COMMITTED = _TESTS / "replay" / "histories"
TEST_KEYS_FILE = _TESTS / "fixtures" / "test_keys.json"
RUNNERS = {
    "default sandbox": SandboxedWorkflowRunner(),
    "worker sandbox": SandboxedWorkflowRunner(
        restrictions=SandboxRestrictions.default.with_passthrough_all_modules()),
}


def committed_histories() -> list[WorkflowHistory]:
    """The committed histories, or none when this install has no ``tests/`` beside it."""
    return [WorkflowHistory.from_json(p.stem, p.read_text())
            for p in sorted(COMMITTED.glob("*.json"))]


async def run_histories(client: Client, limit: int = RUN_HISTORIES) -> list[WorkflowHistory]:
    """Up to ``limit`` finished ProcessEvent histories of this run, fetched 20 at a time."""
    ids = []
    async for wf in client.list_workflows(
            "WorkflowType = 'ProcessEvent' AND ExecutionStatus = 'Completed'", limit=limit):
        ids.append((wf.id, wf.run_id))
    found: list[WorkflowHistory] = []
    for at in range(0, len(ids), 20):
        found += await asyncio.gather(*(client.get_workflow_handle(i, run_id=r).fetch_history()
                                        for i, r in ids[at:at + 20]))
    return found


async def _each(histories: Iterable[WorkflowHistory]) -> AsyncIterator[WorkflowHistory]:
    for history in histories:
        yield history


async def replay_speed(histories: list[WorkflowHistory], converter: DataConverter,
                       runner: SandboxedWorkflowRunner) -> dict[str, Any]:
    """Replays every history once in one replayer; histories/s by wall time and CPU."""
    if not histories:
        return {"histories": 0, "per_s": None, "cpu_ms_per_history": None, "failures": 0}
    replayer = Replayer(workflows=WORKFLOWS, data_converter=converter, workflow_runner=runner)
    wall, cpu = time.perf_counter(), time.process_time()
    # The SDK replays one stream a history at a time, and each activation waits on a hop to
    # its thread pool and back through the core: a single stream left ≈ 40 % of the wall time
    # idle (py-spy, docs/performance.md). A worker replays evicted runs concurrently too.
    results = await asyncio.gather(*(
        replayer.replay_workflows(_each(histories[i::REPLAY_STREAMS]),
                                  raise_on_replay_failure=False)
        for i in range(REPLAY_STREAMS)))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {"histories": len(histories), "per_s": round(len(histories) / wall, 1),
            "cpu_ms_per_history": round(cpu * 1000 / len(histories), 2),
            "failures": sum(len(r.replay_failures) for r in results),
            "streams": REPLAY_STREAMS}


async def replay_report(recorded: list[WorkflowHistory],
                        run_converter: DataConverter) -> dict[str, Any]:
    """Both sets under both sandboxes: ``{set: {sandbox: figures}}``."""
    committed = committed_histories()
    passes = -(-COMMITTED_REPLAYS // len(committed)) if committed else 0
    test_converter = encrypted_data_converter(
        load_key_ring(CodecSettings.from_env({"TOLLGATE_KEYS_FILE": str(TEST_KEYS_FILE)}))
    ) if committed else None
    report: dict[str, Any] = {"committed_files": len(committed), "committed_passes": passes}
    for name, runner in RUNNERS.items():
        report.setdefault("committed", {})[name] = (
            await replay_speed(committed * passes, test_converter, runner)
            if test_converter else replay_speed_missing())
        report.setdefault("run", {})[name] = await replay_speed(recorded, run_converter, runner)
    return report


def replay_speed_missing() -> dict[str, Any]:
    return {"histories": 0, "per_s": None, "cpu_ms_per_history": None, "failures": 0,
            "note": f"no committed histories at {COMMITTED}"}
