"""One process's replay: every history through ``Replayer`` iterators that stay open for a
whole share, so one SDK worker and one sandbox runner serve many histories (what the SDK
allows: each run still gets its own sandboxed instance). Used by ``tollgate.bench.replay`` in
this process and by ``tollgate.bench.replay_procs`` in each child."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable

from temporalio.client import WorkflowHistory
from temporalio.converter import DataConverter
from temporalio.worker import Replayer
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

from tollgate.runtime.sandbox import workflow_runner
from workflows.fan_out import ConsumeEventWorkflow, FanOutWorkflow
from workflows.process_event import ProcessEventWorkflow
from workflows.reconcile_write import ReconcileWriteWorkflow
from workflows.sweep import ReceiptSweepWorkflow
from workflows.tag_item import TagItemWorkflow

WORKFLOWS = [ProcessEventWorkflow, ReconcileWriteWorkflow, ReceiptSweepWorkflow,
             TagItemWorkflow, FanOutWorkflow, ConsumeEventWorkflow]
#: Histories replayed at once, each stream through the same ``Replayer`` (``replay_speed``).
REPLAY_STREAMS = 4
#: The SDK's default sandbox (workflow modules re-imported for every run) and the worker's own,
#: the very runner ``tollgate.runtime.workers`` builds.
RUNNERS = {
    "default sandbox": SandboxedWorkflowRunner(),
    "worker sandbox": workflow_runner(),
}


async def _each(histories: Iterable[WorkflowHistory]) -> AsyncIterator[WorkflowHistory]:
    for history in histories:
        yield history


async def replay_streams(histories: list[WorkflowHistory], converter: DataConverter,
                         runner: SandboxedWorkflowRunner, streams: int = REPLAY_STREAMS) -> int:
    """Replays every history once, ``REPLAY_STREAMS`` at a time, each stream through one
    ``Replayer`` iterator (one SDK worker and one runner reused for its whole share); the
    number of histories that did not replay."""
    replayer = Replayer(workflows=WORKFLOWS, data_converter=converter, workflow_runner=runner)
    # The SDK replays one stream a history at a time, and each activation waits on a hop to
    # its thread pool and back through the core: a single stream left ≈ 40 % of the wall time
    # idle (py-spy, docs/performance.md). A worker replays evicted runs concurrently too.
    results = await asyncio.gather(*(
        replayer.replay_workflows(_each(histories[i::streams]), raise_on_replay_failure=False)
        for i in range(streams)))
    return sum(len(r.replay_failures) for r in results)


