"""Steps 1-2 and the end: what a producer sends, what intake answers, the final outcome."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AwareDatetime, Field, StringConstraints

from contracts.actions import Receipt
from contracts.base import EventRef, EventState, EventType, Frozen, Identifier
from contracts.policy import PolicySnapshot


class EventEnvelope(Frozen):
    """What a producer sends. ``signature`` is HMAC-SHA256 over the canonical envelope without
    ``signature`` and ``received_at`` (see ``policies.signing``); ``received_at`` is stamped by
    the intake, whatever the producer put there."""

    event_id: Identifier
    event_type: EventType
    source: Annotated[str, StringConstraints(min_length=1, max_length=128)]
    tenant_id: Identifier
    entity_id: Identifier
    schema_version: Annotated[int, Field(ge=1, le=1000)]
    occurred_at: AwareDatetime
    received_at: AwareDatetime | None = None
    correlation_id: Identifier
    idempotency_key: Identifier
    payload: dict[str, Any]
    signature: Annotated[str, StringConstraints(min_length=1, max_length=200)]


#: The largest event the intake takes, in characters; a larger one is quarantined unread.
MAX_EVENT_CHARS = 65536


class IntakeRefusal(Frozen):
    """Why an edge (CLI, starter, HTTP relay) refused an event before it reached any business
    key's workflow: the event travels without its text and is quarantined with this reason
    (ADR 0032)."""

    reason_code: Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,63}$")]
    message: Annotated[str, StringConstraints(max_length=500)]


class IntakeRequest(Frozen):
    """Workflow input: the event exactly as the producer sent it, parsed only inside an activity,
    so that even unparseable input is quarantined by the same path. An event over
    ``MAX_EVENT_CHARS`` travels as its length alone (``raw`` empty, ``oversize`` set): its text
    never enters history, and validation quarantines it as ``too_large``."""

    raw: Annotated[str, StringConstraints(max_length=MAX_EVENT_CHARS)]
    received_at: datetime
    oversize: int | None = None
    refusal: IntakeRefusal | None = None
    #: The command shape asked by the code that started the run (ADR 0056): ``STARTED_SHAPE``
    #: from every start of this code (``tollgate.intake.submit.intake_request``), so the run
    #: needs no patch marker to know its shape. None: a run started before, which asks the
    #: ``one-marker-shape`` patch (ADR 0053). Any other value is refused when the input is
    #: decoded, so a worker older than a shape retries the task instead of running it.
    shape: Literal[2, 3] | None = None


#: ``IntakeRequest.shape`` 2: the one-marker shape with no marker, and EXECUTING shown only for
#: a send that outlasts ``EXECUTING_SHOWN_AFTER`` (ADR 0056).
QUIET_SHAPE: Literal[2] = 2
#: ``IntakeRequest.shape`` 3: the quiet shape, and a send whose receipt settles final records
#: the run's final state in the settle's transaction (ADR 0057): no closing local activity.
SETTLE_CLOSES_SHAPE: Literal[3] = 3
#: The shape every start of this code asks.
STARTED_SHAPE: Literal[3] = SETTLE_CLOSES_SHAPE


class IntakeResult(Frozen):
    """Output of ``validate_event``: the idempotency gate's answer as well as validation's."""

    status: Literal["accepted", "duplicate", "quarantined", "dead_lettered", "superseded"]
    event: EventEnvelope | None = None
    ref: EventRef | None = None
    policy: PolicySnapshot | None = None
    reason_code: str | None = None
    message: str | None = None
    previous: FinalOutcome | None = None


#: The ``ApplicationError`` type of an intake delivery the workflow's validator refused as a
#: repeat whose answer is known ("duplicate"); its first detail is the event's state.
DUPLICATE_REFUSAL = "known_duplicate"


class DuplicateSeen(Frozen):
    """Input of ``count_duplicate``: a running workflow answered one more delivery of its key."""

    tenant_id: Identifier
    stage: Literal["in_flight", "after_close"]


class IntakeAck(Frozen):
    """What a producer is told at once (the ``intake`` update's result)."""

    status: Literal["accepted", "duplicate", "invalid"]
    workflow_id: str
    state: EventState
    reason_code: str | None = None
    message: str | None = None
    previous: FinalOutcome | None = None


class FinalOutcome(Frozen):
    workflow_id: str
    tenant_id: str | None = None
    event_id: str | None = None
    state: EventState
    reason_code: str | None = None
    receipt: Receipt | None = None
    policy_version: str | None = None
    payload_fingerprint: str | None = None


# ``from __future__ import annotations`` leaves forward references as strings: resolve them
# now that ``FinalOutcome`` exists.
IntakeResult.model_rebuild()
IntakeAck.model_rebuild()
