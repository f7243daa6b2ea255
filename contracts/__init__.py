"""Every type two layers exchange: requests, results, states, the error taxonomy, id patterns and
the policy snapshot types.

This package is the bottom layer: it imports pydantic and the standard library, nothing else of
the project, so policies, adapters, activities, workflows and the shell can all depend on it
(docs/architecture.md, Layers). Models are re-exported here so callers write
``from contracts import EventRef``; the error taxonomy stays in ``contracts.errors``.

The re-exports are resolved when first asked for (PEP 562): ``import contracts.base`` runs this
``__init__`` first, and importing every module from it built all the contracts' models (≈ 0.1-0.2
s of a console script's start) for a command that needed a pattern or a state
(docs/adr/0068-what-a-command-does-not-use-it-does-not-import.md). Each model is still built
when its own module is imported, never deferred (``contracts/base.py`` says why).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

#: Where each re-exported name is defined.
_HOMES: dict[str, tuple[str, ...]] = {
    "contracts.actions": (
        "ActionRequest", "ExecuteRequest", "ExecuteResult", "Receipt", "ReceiptStatus",
        "ReconcileRequest", "ReconcileResult", "SendClosing", "StepFailure", "TargetCapabilities",
        "target_task_queue",
    ),
    "contracts.base": (
        "EVENT_TYPE_PATTERN", "ID_BODY", "ID_PATTERN", "TERMINAL_STATES", "EventRef",
        "EventState", "EventType", "Frozen", "Identifier",
    ),
    "contracts.drafting": (
        "ContextRequest", "ContextResult", "CustomerRecord", "Draft", "DraftPrompt",
        "DraftRequest", "DraftResult", "Flag",
    ),
    "contracts.events": (
        "EventEnvelope", "FinalOutcome", "IntakeAck", "IntakeRequest", "IntakeResult",
    ),
    "contracts.policy": (
        "OutputShape", "PolicyRule", "PolicySnapshot", "Risk",
    ),
    "contracts.review": (
        "EscalationNotice", "GateCounts", "GateCountsRequest", "RefusedDecision", "ReviewAck",
        "ReviewDecision", "ReviewOpening", "ReviewTicket", "StepRecord", "Transition",
    ),
}
_HOME = {name: module for module, names in _HOMES.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # ``__import__``, not ``importlib.import_module``: inside the worker's sandbox the former
    # goes through the sandbox's importer, which hands back the module this process already
    # has (every module is passed through), where the latter would import a second copy.
    value = getattr(__import__(module, fromlist=[name]), name)
    globals()[name] = value  # asked once: the next lookup is an ordinary attribute
    return value


if TYPE_CHECKING:
    from contracts.actions import (
        ActionRequest,
        ExecuteRequest,
        ExecuteResult,
        Receipt,
        ReceiptStatus,
        ReconcileRequest,
        ReconcileResult,
        SendClosing,
        StepFailure,
        TargetCapabilities,
        target_task_queue,
    )
    from contracts.base import (
        EVENT_TYPE_PATTERN,
        ID_BODY,
        ID_PATTERN,
        TERMINAL_STATES,
        EventRef,
        EventState,
        EventType,
        Frozen,
        Identifier,
    )
    from contracts.drafting import (
        ContextRequest,
        ContextResult,
        CustomerRecord,
        Draft,
        DraftPrompt,
        DraftRequest,
        DraftResult,
        Flag,
    )
    from contracts.events import (
        EventEnvelope,
        FinalOutcome,
        IntakeAck,
        IntakeRequest,
        IntakeResult,
    )
    from contracts.policy import OutputShape, PolicyRule, PolicySnapshot, Risk
    from contracts.review import (
        EscalationNotice,
        GateCounts,
        GateCountsRequest,
        RefusedDecision,
        ReviewAck,
        ReviewDecision,
        ReviewOpening,
        ReviewTicket,
        StepRecord,
        Transition,
    )

__all__ = [
    "EVENT_TYPE_PATTERN", "ID_BODY", "ID_PATTERN", "TERMINAL_STATES", "ActionRequest",
    "ContextRequest", "ContextResult", "CustomerRecord", "Draft", "DraftPrompt", "DraftRequest",
    "DraftResult", "EscalationNotice", "EventEnvelope", "EventRef", "EventState", "EventType",
    "ExecuteRequest", "ExecuteResult", "FinalOutcome", "Flag", "Frozen", "GateCounts",
    "GateCountsRequest", "Identifier", "IntakeAck", "IntakeRequest", "IntakeResult",
    "OutputShape", "PolicyRule", "PolicySnapshot", "Receipt", "ReceiptStatus", "ReconcileRequest",
    "ReconcileResult", "RefusedDecision", "ReviewAck", "ReviewDecision", "ReviewOpening",
    "ReviewTicket", "Risk", "SendClosing", "StepFailure", "StepRecord", "TargetCapabilities",
    "Transition", "target_task_queue",
]
