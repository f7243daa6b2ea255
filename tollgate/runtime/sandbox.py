"""The workflow sandbox the worker runs with, in one place so that whatever replays workflows
outside the worker (``tollgate bench --replay``) replays them under exactly the same rules.

The SDK asks a run's sandbox for the serialization context of every payload sequence it encodes
or decodes, six payload walks per activation, and each question enters the sandbox (an ``exec``
with the restricted builtins swapped in and out, ≈ 60 µs): ≈ 49 questions per ``ProcessEvent``
history for ≈ 10 distinct answers (docs/performance.md, "Replay: where a history's time goes").
``ContextMemoRunner`` keeps each answer until the run's next activation (ADR 0055), and asks
the run's own instance directly rather than through that ``exec`` (ADR 0074).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from temporalio.bridge.proto.workflow_activation import WorkflowActivation
from temporalio.bridge.proto.workflow_completion import WorkflowActivationCompletion
from temporalio.converter import SerializationContext, StorageDriverStoreContext
from temporalio.worker import WorkflowInstance, WorkflowInstanceDetails
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions
from temporalio.workflow import Info


class _ContextMemo(WorkflowInstance):
    """A sandboxed run whose contexts are remembered between activations. A run's state (its
    pending activities, children and signals, which the contexts name) changes only inside
    ``activate``, so an answer holds from one activation to the next and is dropped at each."""

    def __init__(self, sandboxed: WorkflowInstance) -> None:
        self.sandboxed = sandboxed
        #: Where the questions go: the instance the sandbox holds, asked directly, or the sandbox
        #: itself if this SDK does not keep one where 1.35 does (ADR 0074).
        self._ask: WorkflowInstance = _held_instance(sandboxed) or sandboxed
        # Keyed by the SDK's command info (command type and sequence number; None: the run's
        # own payloads), a frozen dataclass.
        self._contexts: dict[Any, SerializationContext | None] = {}
        self._stores: dict[Any, StorageDriverStoreContext] = {}

    def activate(self, act: WorkflowActivation) -> WorkflowActivationCompletion:
        try:
            return self.sandboxed.activate(act)
        finally:
            self._contexts.clear()
            self._stores.clear()

    def get_serialization_context(self, command_info: Any) -> SerializationContext | None:
        if command_info in self._contexts:
            return self._contexts[command_info]
        found = self._contexts[command_info] = self._ask.get_serialization_context(command_info)
        return found

    def get_external_store_context(self, command_info: Any) -> StorageDriverStoreContext:
        found = self._stores.get(command_info)
        if found is None:
            found = self._stores[command_info] = \
                self._ask.get_external_store_context(command_info)
        return found

    def get_info(self) -> Info:
        return self.sandboxed.get_info()

    def get_thread_id(self) -> int | None:
        # The deadlock detector reads the sandbox's own thread.
        return self.sandboxed.get_thread_id()


def _held_instance(sandboxed: WorkflowInstance) -> Any:
    """The run's instance inside the SDK's sandbox (``InSandbox``, which forwards to the run's
    ``_WorkflowInstanceImpl``), or None. Its two context methods read the run's pending
    commands and build frozen dataclasses of modules the sandbox passes through: nothing they do
    needs the restricted builtins, so asking it directly gives the answer the ``exec`` gives,
    without swapping ``sys.modules`` and the builtins in and out (≈ 60 µs a question)."""
    scope = getattr(sandboxed, "globals_and_locals", None)
    held = scope.get("__temporal_in_sandbox") if isinstance(scope, dict) else None
    wanted = ("get_serialization_context", "get_external_store_context")
    return held if all(callable(getattr(held, name, None)) for name in wanted) else None


@dataclass(frozen=True)
class ContextMemoRunner(SandboxedWorkflowRunner):
    """The SDK's sandbox, unchanged (same restrictions, same per-run instance, same determinism
    checks), with each run's serialization contexts remembered until its next activation."""

    def create_instance(self, det: WorkflowInstanceDetails) -> WorkflowInstance:
        return _ContextMemo(super().create_instance(det))


def workflow_runner() -> SandboxedWorkflowRunner:
    """The SDK's sandbox with every module passed through: workflow modules (and what they
    import: contracts, policies, pydantic) are imported once per process instead of once per
    run (-21 % worker CPU, docs/performance.md). They hold constants only
    (tests/workflows/test_module_state.py); the sandbox still refuses clocks, randomness and I/O
    inside workflow code."""
    return ContextMemoRunner(
        restrictions=SandboxRestrictions.default.with_passthrough_all_modules())
