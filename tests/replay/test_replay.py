"""Replay committed histories against the current workflow code: a change that alters the
command sequence of runs already in flight must fail here, before it reaches a worker."""

from __future__ import annotations

import ast
import base64
import json
from datetime import timedelta
from pathlib import Path

import pytest
import temporalio.workflow
from temporalio import workflow
from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer

from contracts import FinalOutcome, IntakeRequest
from tests.conftest import CONVERTER
from tollgate.runtime.sandbox import workflow_runner
from workflows.fan_out import ConsumeEventWorkflow, FanOutWorkflow
from workflows.process_event import ProcessEventWorkflow
from workflows.reconcile_write import ReconcileWriteWorkflow
from workflows.shape import COVERED
from workflows.sweep import ReceiptSweepWorkflow
from workflows.tag_item import TagItemWorkflow
from workflows.versioned import VERSIONED_WORKFLOWS

HISTORY_DIR = Path(__file__).parent / "histories"
HISTORIES = sorted(HISTORY_DIR.glob("*.json"))
WORKFLOW_DIR = Path(__file__).parents[2] / "workflows"
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
    """A versioned worker runs the same code under the same type names (workflows/versioned.py),
    in the worker's own sandbox (tollgate/runtime/sandbox.py), as every worker does: the test
    above keeps the SDK's default sandbox, so each history is replayed under both, and this one
    in half the time (the workflow modules imported once, not once per run)."""
    replayer = Replayer(workflows=VERSIONED_WORKFLOWS, data_converter=CONVERTER,
                        workflow_runner=workflow_runner())
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


#: For each ``workflow.patched()`` id in workflows/: histories recorded on the code before the
#: patch that reach its check, so they replay the old branch (docs/patches.md). A patch moved to
#: ``deprecate_patch`` drops its entry, and its pre-patch histories leave histories/, in the
#: same change.
PRE_PATCH: dict[str, tuple[str, ...]] = {
    "intake-as-local-activity": ("approved_504_reconciled", "no_consent_stopped",
                                 "rejected_by_reviewer", "schema_drift_dead_lettered"),
    "coalesced-search-attributes": ("intake-local-approved_504_reconciled",
                                    "intake-local-no_consent_stopped",
                                    "intake-local-rejected_by_reviewer"),
    "count-duplicate-deliveries": ("pre-dupcount-duplicate_in_flight_approved",),
    "step-failure-dead-letters": ("pre-step-dlq-send_refused_dead_lettered",
                                  "pre-step-dlq-context_refused_dead_lettered"),
    "woken-holds": ("pre-woken-held_then_reopened",),
    "identity-key-separation-of-duties": ("pre-sod-lookalike_requester_approved",),
    # Approved and sent before the mint existed: forced to mint, it meets a marker it never had.
    "action-token": ("target-queue-approved_504_reconciled",),
    # Forced into the one-marker shape, a run from before it takes every patch's new branch
    # without the markers it wrote (and, from the pre-intake-local era, a local activity).
    "one-marker-shape": ("pre-shape-approved_sent", "approved_504_reconciled"),
    # Dead-letter replays that ended before their run recorded its own end (ADR 0069),
    # recorded by tests/workflows/test_replay_records_its_end.py on the code before it.
    "replay-records-its-end": ("pre-replay-end-reconcile_replay_stopped",
                               "pre-replay-end-reconcile_replay_resent"),
    # A replay cancelled during its resend, which wrote its dead letter again and completed
    # (ADR 0077), recorded by tests/workflows/test_replay_cancelled_mid_resend.py before it.
    "resend-cancel-ends-run": ("pre-resend-cancel-reconcile_replay_cancelled_mid_resend",),
    # Lookups that stopped at the backoff's last look, 15 s into a 30 s window (ADR 0079),
    # recorded by tests/workflows/test_reconcile_last_look.py on the code before it.
    "last-look-at-window-end": ("pre-last-look-reconcile_visible_late_in_window",
                                "pre-last-look-reconcile_never_visible"),
}
#: Patch ids with no pre-patch history that fails when the old branch goes, and why.
KNOWN_EXCEPTIONS: dict[str, str] = {
    # The marker is written only when a decision arrives by signal, and every recorder decides
    # by update (the edges' way), so no committed history reaches it; recording one needs a
    # run that took a decision signal on the old code, then replays across the deploy.
    "signal-decisions-refused": "no committed history decides by signal",
    # pre-no-lookup-* replay the old code's window, but their lookups never answer
    # `unverifiable` (that status came with the patch), so they never reach the check. The old
    # branch is for a run that started before the deploy and met the new activity after it; a
    # history of that needs a recording across two code versions, which none of ours is.
    "no-lookup-skips-window": "pre-patch histories predate the `unverifiable` lookup status",
    # Only the activity's task queue differs between the branches, and replay does not compare
    # task queues: coalesced-* (before) and target-queue-* (after) both replay either way.
    "target-task-queue": "the branches differ in a task queue only, which replay cannot see",
    # Only a timer's duration differs (a 429's Retry-After instead of the backoff), and replay
    # does not compare durations: pre-tag-retry-after-* (5 s) and tag-retry-after-* (30 s, with
    # the marker) both replay on the current code.
    "tag-retry-after": "the branches differ in a timer's duration only, which replay cannot see",
    # The branch is chosen by the subscription snapshot in the run's input (``through``), a
    # field no run from before it carries, so no such run reaches the check; the patch only
    # marks which consumer runs took the control-core path (consume_notify_handed_over).
    "consumer-acts-through-control-core": "taken only by input no pre-patch run carries",
}


def patch_calls(*names: str) -> set[str]:
    """The ids passed to ``workflow.<name>()`` (or ``taken()``, workflows/shape.py, which asks
    ``workflow.patched()`` for a run of the old shape) anywhere in workflows/, as literals or
    the module constants they are named by. A call passing on its own parameter (``taken``'s
    ``patched(patch_id)``) is the helper, not a patch."""
    trees = [ast.parse(module.read_text()) for module in sorted(WORKFLOW_DIR.glob("*.py"))]
    constants = {target.id: node.value.value for tree in trees for node in tree.body
                 if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
                 for target in node.targets if isinstance(target, ast.Name)}
    helpers = {call for tree in trees for fn in ast.walk(tree)
               if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef)
               for call in ast.walk(fn) if isinstance(call, ast.Call) and call.args
               and isinstance(call.args[0], ast.Name)
               and call.args[0].id in {a.arg for a in fn.args.args}}
    found: set[str] = set()
    for call in (n for tree in trees for n in ast.walk(tree)):
        if not isinstance(call, ast.Call) or not call.args or call in helpers:
            continue
        func = call.func
        callee = (func.attr if isinstance(func, ast.Attribute)
                  else func.id if isinstance(func, ast.Name) else None)
        if callee in names:
            arg = call.args[0]
            value = arg.value if isinstance(arg, ast.Constant) else (
                constants.get(arg.id) if isinstance(arg, ast.Name) else None)
            assert isinstance(value, str), f"cannot resolve the patch id {ast.unparse(arg)}"
            found.add(value)
    return found


def markers(path: Path) -> set[str]:
    """The patch ids a committed history recorded markers for."""
    ids = set()
    for event in json.loads(path.read_text())["events"]:
        details = event.get("markerRecordedEventAttributes", {}).get("details", {})
        for payload in details.get("patch-data", {}).get("payloads", []):
            ids.add(json.loads(base64.b64decode(payload["data"]))["id"])
    return ids


def test_every_patch_in_workflows_has_a_pre_patch_history_or_a_stated_exception() -> None:
    # taken() answers True without a marker in a shape run: only for patches older than it.
    assert patch_calls("taken") <= COVERED
    patched = patch_calls("patched", "taken")
    assert patched, "no workflow.patched() call found: the scan is broken"
    assert patched - set(PRE_PATCH) - set(KNOWN_EXCEPTIONS) == set(), (
        "record the run before the patch from the code before it (docs/patches.md)")
    # A deprecated or removed patch keeps no pre-patch entry: those runs can no longer exist.
    assert set(PRE_PATCH) - patched == set()
    for deprecated in patch_calls("deprecate_patch"):
        assert any(deprecated in markers(h) for h in HISTORIES), (
            f"{deprecated}: deprecated without a committed history from after the patch")


PAIRS = [(patch, name) for patch, names in PRE_PATCH.items() for name in names]


@pytest.mark.parametrize(("patch", "name"), PAIRS, ids=[f"{p}:{n}" for p, n in PAIRS])
async def test_a_pre_patch_history_fails_once_its_old_branch_is_gone(
        patch: str, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """It was recorded before the patch (no marker) and reaches the check: with the old branch
    taken away (``patched`` answering True), replaying it is a nondeterminism error."""
    path = HISTORY_DIR / f"{name}.json"
    assert patch not in markers(path)
    original = temporalio.workflow.patched
    monkeypatch.setattr(temporalio.workflow, "patched",
                        lambda pid: True if pid == patch else original(pid))
    result = await Replayer(workflows=WORKFLOWS, data_converter=CONVERTER).replay_workflow(
        load(path), raise_on_replay_failure=False)
    assert result.replay_failure is not None, f"{name} never takes the old branch of {patch}"
