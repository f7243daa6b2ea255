"""The worker's sandbox remembers each run's serialization contexts between activations
(tollgate/runtime/sandbox.py, ADR 0055) and asks the run's instance for them without the
sandbox's exec (ADR 0074): every answer must be the one the sandbox would give at that moment,
so every payload is still sealed and opened with the right tenant's key, and a replay still
catches a changed command sequence."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from temporalio import workflow
from temporalio.client import WorkflowHistory
from temporalio.converter import SerializationContext
from temporalio.worker import Replayer, WorkflowInstance, WorkflowInstanceDetails
from temporalio.worker.workflow_sandbox import SandboxRestrictions

from contracts import FinalOutcome, IntakeRequest
from tests.conftest import CONVERTER
from tollgate.bench.replay_streams import RUNNERS, WORKFLOWS
from tollgate.runtime.sandbox import ContextMemoRunner, _ContextMemo, workflow_runner
from workflows.process_event import ProcessEventWorkflow
from workflows.reconcile_write import ReconcileWriteWorkflow

HISTORIES = sorted((Path(__file__).parent / "histories").glob("*.json"))


class _Checked(_ContextMemo):
    """Asks the sandbox every time as well, and records any answer the memo got wrong."""

    answers = 0
    remembered = 0
    #: Runs whose questions went through the sandbox's ``exec`` rather than to the run's instance.
    through_exec = 0
    wrong: list[str] = []

    def __init__(self, sandboxed: WorkflowInstance) -> None:
        super().__init__(sandboxed)
        _Checked.through_exec += self._ask is sandboxed

    def get_serialization_context(self, command_info: Any) -> SerializationContext | None:
        known = command_info in self._contexts
        found = super().get_serialization_context(command_info)
        fresh = self.sandboxed.get_serialization_context(command_info)
        _Checked.answers += 1
        _Checked.remembered += known
        if found != fresh:
            _Checked.wrong.append(f"{command_info}: {found} != {fresh}")
        return found


class _CheckedRunner(ContextMemoRunner):
    def create_instance(self, det: WorkflowInstanceDetails) -> WorkflowInstance:
        return _Checked(super(ContextMemoRunner, self).create_instance(det))


async def test_every_remembered_context_is_the_one_the_sandbox_gives() -> None:
    histories = [WorkflowHistory.from_json(p.stem, p.read_text()) for p in HISTORIES]
    runner = _CheckedRunner(restrictions=SandboxRestrictions.default
                            .with_passthrough_all_modules())
    replayer = Replayer(workflows=WORKFLOWS, data_converter=CONVERTER, workflow_runner=runner)

    async def each() -> Any:
        for history in histories:
            yield history

    result = await replayer.replay_workflows(each(), raise_on_replay_failure=False)
    assert result.replay_failures == {}
    assert _Checked.wrong == []
    # ... and asked of the run's own instance, not through the sandbox's exec (ADR 0074): an SDK
    # that no longer keeps the instance where 1.35 does would fall back, correct but slower.
    assert _Checked.through_exec == 0
    # Most questions are answered from the memo: what it is for.
    assert _Checked.remembered > _Checked.answers / 2


@workflow.defn(name="ProcessEvent")
class TimerFirst(ProcessEventWorkflow):
    """A deliberately incompatible change, run inside the worker's sandbox."""

    @workflow.run
    async def run(self, request: IntakeRequest) -> FinalOutcome:
        await workflow.sleep(timedelta(seconds=1))
        return await super().run(request)


async def test_the_worker_sandbox_still_catches_a_changed_command_sequence() -> None:
    replayer = Replayer(workflows=[TimerFirst, ReconcileWriteWorkflow], data_converter=CONVERTER,
                        workflow_runner=workflow_runner())
    history = Path(__file__).parent / "histories" / "approved_504_reconciled.json"
    result = await replayer.replay_workflow(
        WorkflowHistory.from_json(history.stem, history.read_text()),
        raise_on_replay_failure=False)
    assert result.replay_failure is not None
    assert "nondetermin" in str(result.replay_failure).lower()


def test_the_bench_replays_with_the_workers_own_sandbox() -> None:
    assert RUNNERS["worker sandbox"] == workflow_runner()
    assert isinstance(RUNNERS["worker sandbox"], ContextMemoRunner)
