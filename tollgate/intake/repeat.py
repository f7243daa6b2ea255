"""The answer to a delivery of an event whose run already closed (``submit``'s repeat path):
its outcome ("duplicate" with the earlier outcome, "invalid" when it ended refused, or the
producer's ``idempotency_conflict``), or, for a run that closed with no outcome (terminated by
hand, failed, timed out), a duplicate saying how it ended. Never a second run: the key is spent.

An end PostgreSQL recorded after the run closed (a dead letter's write settled afterwards, ADRs
0061 and 0063) is the event's, not the run's result: with a ``recorded`` lookup it is the answer's
earlier outcome (ADR 0062). Without one, or when PostgreSQL does not answer, the run's stands.
"""

from __future__ import annotations

from typing import Any

from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowHandle,
)

from contracts import EventState, FinalOutcome, IntakeAck, IntakeRequest
from contracts.actions import RECORDED_AFTER_THE_RUN
from policies.keys import payload_fingerprint
from tollgate.intake.recorded import RecordedEnd
from workflows.search_attributes import STATE

#: A repeat's reason when the first delivery's run closed with no outcome.
ENDED_WITHOUT_OUTCOME = "ended_without_outcome"
#: Earlier outcomes that make a repeat "invalid" (the producer must send a corrected event).
_INVALID_END = {EventState.QUARANTINED, EventState.DEAD_LETTERED, EventState.SUPERSEDED}


def ended_without_outcome(status: WorkflowExecutionStatus | None) -> str | None:
    """How a run closed with no outcome ("terminated", "failed", "timed out", "canceled"), in
    words for a producer, a reviewer or an operator; None for a run that is running, completed,
    or continued as new (its next run carries on). Such a run's last state is only where it
    stopped."""
    if status in (None, WorkflowExecutionStatus.RUNNING, WorkflowExecutionStatus.COMPLETED,
                  WorkflowExecutionStatus.CONTINUED_AS_NEW):
        return None
    return status.name.lower().replace("_", " ")


async def answer_closed(client: Client, wf_id: str, request: IntakeRequest,
                        recorded: RecordedEnd | None = None) -> IntakeAck:
    """The answer for ``request``, a repeat of the event whose run ``wf_id`` has closed;
    ``recorded`` asks PostgreSQL for an end recorded after the run."""
    handle = client.get_workflow_handle(wf_id, result_type=FinalOutcome)
    fingerprint = payload_fingerprint(request.raw)
    try:
        previous = await handle.result()
    except WorkflowFailureError:
        return await _ended_without_outcome(client, handle, fingerprint, recorded)
    if previous.payload_fingerprint != fingerprint:
        return IntakeAck(status="invalid", workflow_id=wf_id, state=previous.state,
                         reason_code="idempotency_conflict",
                         message="this idempotency_key was already used with another payload")
    return _answer(wf_id, await _recorded_after(wf_id, recorded) or previous)


async def _recorded_after(wf_id: str, recorded: RecordedEnd | None) -> FinalOutcome | None:
    """The end PostgreSQL recorded after the run closed, when it did (ADRs 0061, 0063): the
    only ends a closed run's result cannot show. Asked after the payload matched, so the
    producer's conflict is still decided by the run alone."""
    if recorded is None:
        return None
    end = await recorded(wf_id)
    return end if end is not None and end.reason_code in RECORDED_AFTER_THE_RUN else None


def _answer(wf_id: str, previous: FinalOutcome) -> IntakeAck:
    status = "invalid" if previous.state in _INVALID_END else "duplicate"
    message = (f"the first delivery of this key ended {previous.state.value}; send a corrected "
               "event with a new idempotency_key" if status == "invalid" else None)
    return IntakeAck(status=status, workflow_id=wf_id, state=previous.state,
                     reason_code=previous.reason_code if status == "invalid" else "duplicate",
                     message=message, previous=previous)


async def _ended_without_outcome(client: Client, handle: WorkflowHandle[Any, FinalOutcome],
                                 fingerprint: str | None,
                                 recorded: RecordedEnd | None) -> IntakeAck:
    """A repeat of an event whose run closed with no outcome (terminated by hand, timed out,
    failed): still a duplicate, never a second run (the key is spent), answered with how the
    run ended and the last state it showed, rather than the run's failure as an error. Its
    payload is compared with the run's own input (every run of an event, continued or not,
    starts from the producer's request), as an outcome's fingerprint would be."""
    async for event in handle.fetch_history_events():
        started = event.workflow_execution_started_event_attributes.input.payloads
        first, = await client.data_converter.decode(started, [IntakeRequest])
        if payload_fingerprint(first.raw) != fingerprint:
            return IntakeAck(status="invalid", workflow_id=handle.id, state=EventState.RECEIVED,
                             reason_code="idempotency_conflict",
                             message="this idempotency_key was already used with another "
                                     "payload")
        break
    if (end := await _recorded_after(handle.id, recorded)) is not None:
        # `ops close --unresolved-write` ended it, and the dead letter's replay settled the
        # write: the event has its outcome after all.
        return _answer(handle.id, end)
    found = await handle.describe()
    how = ended_without_outcome(found.status) or "closed"
    shown = found.typed_search_attributes.get(STATE)
    state = EventState(shown) if shown and shown in EventState.__members__ else EventState.RECEIVED
    return IntakeAck(status="duplicate", workflow_id=handle.id, state=state,
                     reason_code=ENDED_WITHOUT_OUTCOME,
                     message=f"the first delivery of this key ended {how}, with no outcome; "
                             "send the event with a new idempotency_key to process it again")
