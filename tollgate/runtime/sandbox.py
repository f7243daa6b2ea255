"""The workflow sandbox the worker runs with, in one place so that whatever replays workflows
outside the worker (``tollgate bench --replay``) replays them under exactly the same rules."""

from __future__ import annotations

from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions


def workflow_runner() -> SandboxedWorkflowRunner:
    """The SDK's sandbox with every module passed through: workflow modules (and what they
    import: contracts, policies, pydantic) are imported once per process instead of once per
    run (-21 % worker CPU, docs/performance.md). They hold constants only
    (tests/workflows/test_module_state.py); the sandbox still refuses clocks, randomness and I/O
    inside workflow code."""
    return SandboxedWorkflowRunner(
        restrictions=SandboxRestrictions.default.with_passthrough_all_modules())
