"""Every type two layers exchange: requests, results, states, the error taxonomy, id patterns and
the policy snapshot types.

This package is the bottom layer: it imports pydantic and the standard library, nothing else of
the project, so policies, adapters, activities, workflows and the shell can all depend on it
(docs/architecture.md, Layers). Models are re-exported here so callers write
``from contracts import EventRef``; the error taxonomy stays in ``contracts.errors``.
"""

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
