"""The bottom of the contracts: identifiers, the event states and the small event handle.

Pure pydantic and the standard library; nothing of the project is imported here.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import BaseModel, ConfigDict, StringConstraints

#: What counts as an identifier (tenant, event, entity, key): one definition for contracts,
#: the schema registry, the policy matrix and the starter.
#: ``$`` is pydantic's (Rust regex: the end of the text). Python code matches these patterns
#: with ``re.fullmatch`` only: ``re.match`` lets ``$`` match before a trailing newline, which is
#: how ``event/acme/key\n`` once became a workflow id.
ID_BODY = r"[A-Za-z0-9][A-Za-z0-9._:\-]{0,127}"
ID_PATTERN = rf"^{ID_BODY}$"
EVENT_TYPE_PATTERN = r"^[A-Z][A-Z0-9_]{1,63}$"

Identifier = Annotated[str, StringConstraints(pattern=ID_PATTERN)]
EventType = Annotated[str, StringConstraints(pattern=EVENT_TYPE_PATTERN)]


class Frozen(BaseModel):
    # Built when defined, never deferred (``defer_build``): the Temporal SDK reads and writes a
    # model through a TypeAdapter, which builds a deferred model's schema for itself and leaves
    # the model incomplete, so every converter the SDK makes (one per replayed run and
    # activation) built it again: replay took 30-45 % more CPU per history (docs/performance.md,
    # "Replay and defer_build"). The CLI's imports paid 0.05-0.1 s for it.
    model_config = ConfigDict(frozen=True, extra="forbid")


class EventState(StrEnum):
    RECEIVED = "RECEIVED"
    VALIDATED = "VALIDATED"
    CONTEXT_READY = "CONTEXT_READY"
    DRAFTED = "DRAFTED"
    AWAITING_REVIEW = "AWAITING_REVIEW"
    #: The draft waits at the policy gate (the tenant's review backlog is over its limit).
    HELD_AT_GATE = "HELD_AT_GATE"
    APPROVED = "APPROVED"
    EXECUTING = "EXECUTING"
    SUCCEEDED = "SUCCEEDED"
    QUARANTINED = "QUARANTINED"
    DUPLICATE = "DUPLICATE"
    SUPERSEDED = "SUPERSEDED"
    STOPPED = "STOPPED"
    FAILED_VALIDATION = "FAILED_VALIDATION"
    REJECTED = "REJECTED"
    EXPIRED = "EXPIRED"
    UNKNOWN_WRITE = "UNKNOWN_WRITE"
    RECONCILING = "RECONCILING"
    DEAD_LETTERED = "DEAD_LETTERED"


TERMINAL_STATES: frozenset[EventState] = frozenset(
    {
        EventState.SUCCEEDED,
        EventState.QUARANTINED,
        EventState.DUPLICATE,
        EventState.SUPERSEDED,
        EventState.STOPPED,
        EventState.FAILED_VALIDATION,
        EventState.REJECTED,
        EventState.EXPIRED,
        EventState.DEAD_LETTERED,
    }
)


class EventRef(Frozen):
    """The small handle later steps pass around instead of the whole event."""

    workflow_id: str
    tenant_id: str
    event_id: str
    event_type: str
    entity_id: str
    correlation_id: str
    schema_version: int
