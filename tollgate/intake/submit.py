"""The producer's API: hand events to Tollgate and get the intake answer at once.

``submit()`` answers one event: accepted (with its workflow id), duplicate (with the earlier
outcome), or invalid (with the reason; the event is quarantined, never dropped). Nobody waits
for a model. Where there is PostgreSQL, a ``recorded`` lookup lets a repeat of a closed run be
answered with an end recorded after the run (``intake.recorded``, ADR 0062). ``starter.py``
and ``tollgate submit`` are thin callers of this module.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import re
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from temporalio.client import (
    Client,
    WithStartWorkflowOperation,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import ApplicationError, WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from adapters.broker.cancel import raise_if_cancelled
from contracts import EventState, IntakeAck, IntakeRequest
from contracts.base import ID_PATTERN
from contracts.events import DUPLICATE_REFUSAL, MAX_EVENT_CHARS, STARTED_SHAPE, IntakeRefusal
from policies.keys import event_workflow_id, quarantine_workflow_id
from policies.redaction import personal_data_kind
from tollgate.intake.edge import refusal_of, text_refusal
from tollgate.intake.recorded import RecordedEnd
from tollgate.intake.repeat import ENDED_WITHOUT_OUTCOME, answer_closed
from tollgate.intake.visibility import start_view
from tollgate.observability.tracing import submit_span

#: The workflow and update an event is offered to, by name (``workflows/process_event.py``):
#: importing the workflow for its method references brought every activity, policy and
#: contract it uses into each `tollgate submit` (docs/performance.md, "CLI start-up").
#: tests/test_intake_names.py holds them to the workflow's definition.
EVENT_WORKFLOW = "ProcessEvent"
INTAKE_UPDATE = "intake"

_ID = re.compile(ID_PATTERN)
#: How long one delivery keeps being offered while the server is busy with the same workflow's
#: other deliveries, and the first and longest wait between offers (doubling, jittered in full
#: so a crowd of copies spreads out instead of returning together).
BUSY_PATIENCE_S = 30.0
BUSY_BACKOFF_S = 0.05
BUSY_BACKOFF_MAX_S = 2.0


def workflow_id_for(raw: str) -> str:
    """``event/{tenant}/{key}`` when the input names both, else a quarantine id of its hash.
    An oversized event, or one whose text an edge refuses, always gets the quarantine id: it
    is never admitted."""
    if len(raw) > MAX_EVENT_CHARS or text_refusal(raw) is not None:
        return quarantine_workflow_id(raw)
    try:
        data = json.loads(raw)
    except ValueError:
        return quarantine_workflow_id(raw)
    if isinstance(data, dict):
        tenant, key = data.get("tenant_id"), data.get("idempotency_key")
        named = [v for v in (tenant, key) if isinstance(v, str) and _ID.fullmatch(v)]
        # A key that looks like an e-mail or phone must not reach a workflow id (stored in
        # clear): such an event goes the quarantine way, whose intake names the reason.
        if len(named) == 2 and not personal_data_kind(named[1]):
            return event_workflow_id(*named)
    return quarantine_workflow_id(raw)


def intake_request(raw: str, refusal: IntakeRefusal | None = None) -> IntakeRequest:
    """The workflow input for ``raw``; an oversized event travels as its length only, a refused
    one as its reason only."""
    now = datetime.now(UTC)
    # Every run this code starts says its shape in its input: no patch marker (ADR 0056).
    if refusal is not None:
        return IntakeRequest(raw="", received_at=now, refusal=refusal, shape=STARTED_SHAPE)
    if len(raw) > MAX_EVENT_CHARS:
        return IntakeRequest(raw="", received_at=now, oversize=len(raw), shape=STARTED_SHAPE)
    return IntakeRequest(raw=raw, received_at=now, shape=STARTED_SHAPE)


async def submit(client: Client, raw: str, *, task_queue: str,
                 tenant_secrets: Mapping[str, str] | None = None,
                 recorded: RecordedEnd | None = None) -> IntakeAck:
    """Hand one event to Tollgate and return the intake answer (no model is waited for).

    An event the edge refuses (its text, or unsigned; with ``tenant_secrets``, a wrong
    signature or tenant too) goes to its quarantine id, never its key's (``intake.edge``).
    ``recorded`` (``intake.recorded``) is PostgreSQL's end of an event, asked only for a
    repeat whose run has closed."""
    refusal = refusal_of(raw, tenant_secrets)
    wf_id = quarantine_workflow_id(raw) if refusal else workflow_id_for(raw)
    with submit_span("" if refusal else raw, wf_id):  # the trace root (a no-op when off)
        ack = await _deliver(client, raw, wf_id, task_queue, refusal, recorded)
    if ack.reason_code == "idempotency_conflict" and ack.workflow_id != quarantine_workflow_id(raw):
        # Same key, other payload: quarantine this delivery through the ordinary intake path,
        # whose gate sees the conflict and records it; the first delivery is untouched.
        ack = await _deliver(client, raw, quarantine_workflow_id(raw), task_queue)
    return ack


#: What the server answers when one workflow gets many deliveries at once: past 10 updates in
#: flight it turns the rest away (RESOURCE_EXHAUSTED), and doing so can clear the workflow's
#: update registry, aborting updates it had admitted but not yet handed to the worker
#: (UNAVAILABLE "workflow update was aborted"). Both say "ask again".
BUSY_CODES = frozenset({RPCStatusCode.RESOURCE_EXHAUSTED, RPCStatusCode.UNAVAILABLE})


#: How many deliveries of one workflow this process offers the server at once; the rest wait
#: their turn here. The server's own limit is 10 per workflow, and going past it is what clears
#: the registry above, so one process's crowd of copies stays below it.
LANE_WIDTH = 4
_lanes: dict[str, tuple[asyncio.Semaphore, int]] = {}


@contextlib.asynccontextmanager
async def _lane(wf_id: str) -> AsyncIterator[None]:
    gate, users = _lanes.get(wf_id) or (asyncio.Semaphore(LANE_WIDTH), 0)
    _lanes[wf_id] = (gate, users + 1)
    try:
        async with gate:
            yield
    finally:
        gate, users = _lanes[wf_id]
        if users == 1:
            del _lanes[wf_id]
        else:
            _lanes[wf_id] = (gate, users - 1)


async def _deliver(client: Client, raw: str, wf_id: str, task_queue: str,
                   refusal: IntakeRefusal | None = None,
                   recorded: RecordedEnd | None = None) -> IntakeAck:
    request = intake_request(raw, refusal)
    async with _lane(wf_id):
        ack = await _offer(client, request, wf_id, task_queue)
    if ack is not None:
        return ack
    # The first delivery already finished: answer with its outcome.
    return await answer_closed(client, wf_id, request, recorded)


async def _offer(client: Client, request: IntakeRequest, wf_id: str,
                 task_queue: str) -> IntakeAck | None:
    """The intake update's answer, or None when the workflow already closed."""
    # The update id names this one delivery call, not the event (the workflow id does that):
    # every retry below reuses it, so a retry of an update the workflow already took returns
    # that update's own answer instead of being counted as a second delivery.
    # Dashed, as a UUID: a log line keeps it (32 bare hex digits would be masked as a token).
    delivery_id = f"intake-{uuid.uuid4()}"
    deadline = time.monotonic() + BUSY_PATIENCE_S
    attempt = 0
    # Tenant and type listed from the start: the run need not upsert them (ADR 0053).
    summary, attributes = start_view(request.raw)
    while True:
        start: WithStartWorkflowOperation[Any, Any] = WithStartWorkflowOperation(
            EVENT_WORKFLOW, request, id=wf_id, task_queue=task_queue,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
            static_summary=summary, search_attributes=attributes,
        )
        try:
            ack: IntakeAck = await client.execute_update_with_start_workflow(
                INTAKE_UPDATE, request, start_workflow_operation=start, id=delivery_id,
                result_type=IntakeAck)
            return ack
        except WorkflowAlreadyStartedError:
            return None
        except WorkflowUpdateRPCTimeoutOrCancelledError as exc:
            # The SDK reports the call a caller cancelled (``wait_for``'s or ``asyncio.timeout``'s
            # deadline, a shutdown) as this error: given back as the cancel it is, so the
            # caller's deadline reads as a ``TimeoutError`` (the relay's outage check needs it).
            raise_if_cancelled(exc)
            raise
        except WorkflowUpdateFailedError as exc:
            if (known := _known_duplicate(exc, wf_id)) is None:
                raise
            return known
        except RPCError as exc:
            # Many copies of one event at once (BUSY_CODES). The same delivery again is safe
            # (the workflow id dedupes the event, the update id this call), so wait a little
            # and ask again rather than fail the producer.
            if exc.status not in BUSY_CODES or time.monotonic() >= deadline:
                raise
            ceiling = min(BUSY_BACKOFF_MAX_S, BUSY_BACKOFF_S * 2 ** min(attempt, 16))
            await asyncio.sleep(ceiling * random.random())
            attempt += 1
        finally:
            _retrieve_start_error(start)


def _known_duplicate(exc: WorkflowUpdateFailedError, wf_id: str) -> IntakeAck | None:
    """The workflow's validator refused a repeat whose answer is known (workflows/intake.py):
    the producer gets the "duplicate" the handler would have given, and nothing was written."""
    cause = exc.cause
    if not (isinstance(cause, ApplicationError) and cause.type == DUPLICATE_REFUSAL):
        return None
    state = EventState(cause.details[0]) if cause.details else EventState.RECEIVED
    return IntakeAck(status="duplicate", workflow_id=wf_id, state=state, reason_code="duplicate")


def _retrieve_start_error(start: WithStartWorkflowOperation) -> None:
    """The SDK also fails the start operation's own handle future with the call's error; nobody
    else awaits it, so read it here or asyncio prints "Future exception was never retrieved" at
    exit. (The SDK offers no public "did it fail" check: ``workflow_handle()`` would wait.)"""
    future = start._workflow_handle
    if future.done() and not future.cancelled():
        future.exception()


def describe(ack: IntakeAck) -> str:
    """The one line a producer reads for ``ack``."""
    if ack.status == "accepted":
        return f"accepted  {ack.workflow_id}"
    if ack.status == "duplicate":
        if ack.reason_code == ENDED_WITHOUT_OUTCOME:
            return f"duplicate {ack.workflow_id} ({ack.message})"
        if ack.previous:
            # With its reason, as `ops state` shows an end: SUCCEEDED (dead_letter_replayed).
            why = f" ({ack.previous.reason_code})" if ack.previous.reason_code else ""
            return f"duplicate {ack.workflow_id} (earlier outcome: {ack.previous.state}{why})"
        return f"duplicate {ack.workflow_id} (first delivery in progress: {ack.state})"
    return f"invalid   {ack.workflow_id}: {ack.reason_code}: {ack.message or ''}".rstrip(": ")


async def submit_all(client: Client, raws: Iterable[str], *, task_queue: str,
                     on_ack: Callable[[IntakeAck], None] | None = None,
                     tenant_secrets: Mapping[str, str] | None = None,
                     recorded: RecordedEnd | None = None) -> list[IntakeAck]:
    """Submit each event in order; one event's rejection never stops the ones after it."""
    acks = []
    for raw in raws:
        ack = await submit(client, raw, task_queue=task_queue, tenant_secrets=tenant_secrets,
                           recorded=recorded)
        if on_ack is not None:
            on_ack(ack)
        acks.append(ack)
    return acks
