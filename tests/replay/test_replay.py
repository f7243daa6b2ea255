"""Replay committed histories against the current workflow code: a change that alters the
command sequence of runs already in flight must fail here, before it reaches a worker."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from temporalio import workflow
from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer

from contracts import FinalOutcome, IntakeRequest
from tests.conftest import CONVERTER
from workflows.fan_out import ConsumeEventWorkflow, FanOutWorkflow
from workflows.process_event import ProcessEventWorkflow
from workflows.reconcile_write import ReconcileWriteWorkflow
from workflows.sweep import ReceiptSweepWorkflow
from workflows.tag_item import TagItemWorkflow
from workflows.versioned import VERSIONED_WORKFLOWS

HISTORIES = sorted((Path(__file__).parent / "histories").glob("*.json"))
WORKFLOWS = [ProcessEventWorkflow, ReconcileWriteWorkflow, ReceiptSweepWorkflow,
             TagItemWorkflow, FanOutWorkflow, ConsumeEventWorkflow]


def load(path: Path) -> WorkflowHistory:
    return WorkflowHistory.from_json(path.stem, path.read_text())


@pytest.mark.parametrize("path", HISTORIES, ids=[p.stem for p in HISTORIES])
async def test_committed_history_replays_on_current_code(path: Path) -> None:
    replayer = Replayer(workflows=WORKFLOWS, data_converter=CONVERTER)
    await replayer.replay_workflow(load(path))


@pytest.mark.parametrize("path", HISTORIES, ids=[p.stem for p in HISTORIES])
async def test_committed_history_replays_on_the_versioned_types(path: Path) -> None:
    """A versioned worker runs the same code under the same type names (workflows/versioned.py)."""
    replayer = Replayer(workflows=VERSIONED_WORKFLOWS, data_converter=CONVERTER)
    await replayer.replay_workflow(load(path))


@workflow.defn(name="ProcessEvent", sandboxed=False)
class TimerFirstProcessEvent(ProcessEventWorkflow):
    """A deliberately incompatible change: a timer before the first activity."""

    @workflow.run
    async def run(self, request: IntakeRequest) -> FinalOutcome:
        await workflow.sleep(timedelta(seconds=1))
        return await super().run(request)


async def test_an_incompatible_change_is_caught_by_replay() -> None:
    assert len(HISTORIES) >= 4
    replayer = Replayer(workflows=[TimerFirstProcessEvent, ReconcileWriteWorkflow],
                        data_converter=CONVERTER)
    result = await replayer.replay_workflow(
        load(Path(__file__).parent / "histories" / "approved_504_reconciled.json"),
        raise_on_replay_failure=False)
    assert result.replay_failure is not None
    assert "nondetermin" in str(result.replay_failure).lower()
