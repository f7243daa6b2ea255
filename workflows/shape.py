"""One patch marker for the whole command sequence of a ProcessEventWorkflow run (ADR 0053).

Every ``workflow.patched(X)`` writes a marker and, from sdk-core, a ``TemporalChangeVersion``
search-attribute upsert: two history events per patch a run reaches. A run started on this
code asks one patch, ``ONE_MARKER_SHAPE``, at the very top of its ``run`` and keeps the answer
on the workflow instance; ``taken(X)`` then answers True for every older patch without asking
it. A run started before this code replays its first workflow task without that marker, so the
flag is False and ``taken(X)`` asks ``workflow.patched(X)`` exactly as the run did then (core
memoises each answer). Changes made with the one marker (the new shape) check ``new_shape()``.

The flag lives on the instance (``workflow.instance()``), never in a module global: a replay may
run unsandboxed, where module state is shared by every run of the process. A workflow type that
never asks the shape patch (no ``_new_shape`` attribute) gets ``workflow.patched(X)`` as before.
A run started by this code says its shape in its input instead (``IntakeRequest.shape``,
ADR 0056): ``begin(QUIET_SHAPE)`` takes the new shape with no marker at all, since the input is
in the run's first history event, the same on replay; ``quiet()`` tells those runs apart for the
changes made with that shape, and ``settle_closes()`` the runs of the later input shape
(``SETTLE_CLOSES_SHAPE``, ADR 0057), quiet too. Deterministic like any workflow code.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts.events import QUIET_SHAPE, SETTLE_CLOSES_SHAPE

#: workflow.patched() id of the new shape: one marker, every earlier ProcessEvent patch taken,
#: and the run's own changes of issue 33. Never reuse or remove while older histories may run.
ONE_MARKER_SHAPE = "one-marker-shape"
#: The patches the shape takes, all older than it. A patch added after it is not one of them:
#: a shape run started before that patch must still answer False for it, so a later change to
#: ProcessEvent asks ``workflow.patched()`` itself (docs/patches.md).
COVERED = frozenset({
    "intake-as-local-activity", "coalesced-search-attributes", "count-duplicate-deliveries",
    "step-failure-dead-letters", "woken-holds", "identity-key-separation-of-duties",
    "signal-decisions-refused", "target-task-queue", "action-token",
})
#: The instance attribute holding the answer: None until asked. Only ProcessEventWorkflow
#: declares it (``__init__``).
FLAG = "_new_shape"
#: The instance attribute set True when the run's input asked the quiet shape (ADR 0056).
QUIET = "_quiet_shape"
#: The instance attribute set True when the input asked the settle-closes shape (ADR 0057).
SETTLE_CLOSES = "_settle_closes"


def begin(started: int | None = None) -> bool:
    """Fix this run's shape once and keep it on the instance: from the run's input when it
    asks ``QUIET_SHAPE`` (no command), else by asking the shape patch. Called first thing in
    ``ProcessEventWorkflow.run`` with the input's ``shape``; any later call returns the kept
    answer. A handler that ran before ``run`` (the intake update of the first activation runs
    first, but waits for validation before it could ask) would fix it here without the input:
    whoever asks first fixes the answer, at the same point on replay."""
    instance = workflow.instance()
    flag = getattr(instance, FLAG, None)
    if flag is None:
        quiet = started in (QUIET_SHAPE, SETTLE_CLOSES_SHAPE)
        flag = quiet or workflow.patched(ONE_MARKER_SHAPE)
        setattr(instance, FLAG, flag)
        setattr(instance, QUIET, quiet)
        setattr(instance, SETTLE_CLOSES, started == SETTLE_CLOSES_SHAPE)
    return bool(flag)


def quiet() -> bool:
    """Whether this run's input asked the quiet shape (ADR 0056): the new shape, no marker."""
    return new_shape() and bool(getattr(workflow.instance(), QUIET, False))


def settle_closes() -> bool:
    """Whether this run's input asked the settle-closes shape (ADR 0057): its send records the
    run's final state with the receipt's final settle."""
    return quiet() and bool(getattr(workflow.instance(), SETTLE_CLOSES, False))


def new_shape() -> bool:
    """Whether this run took the new shape (always False for a type that never asks it)."""
    return hasattr(workflow.instance(), FLAG) and begin()


def taken(patch_id: str) -> bool:
    """``workflow.patched(patch_id)``, answered True with no marker in a new-shape run; only
    for a patch older than the shape (``COVERED``: any other id is a programming error)."""
    if patch_id not in COVERED:
        raise ValueError(f"{patch_id} is newer than the shape: ask workflow.patched() for it")
    return True if new_shape() else workflow.patched(patch_id)
