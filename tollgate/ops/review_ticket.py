"""The open review's ticket as a listing carries it (issue 33, docs/review.md).

A run waiting for review shows ``TollgateReviewTicket`` (``"<draft_version>:<request_id>"``) in
the same upsert as ``TollgateState = AWAITING_REVIEW``, so whoever lists the queue (or describes
one run) can name the review in its decision without asking the ``review_ticket`` query first:
one message instead of two. The ticket is a hint, never an authority: the ``review`` update's
validator still compares it with the review now open and refuses a stale one
(``wrong_request``, ``stale_draft_version``). A run from before the attribute carries none;
callers ask the query then, as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any, NamedTuple

from temporalio.client import (
    WorkflowExecution,
    WorkflowExecutionStatus,
    WorkflowHandle,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)

from adapters.broker.cancel import within
from contracts import TERMINAL_STATES, EventState, ReviewAck, ReviewDecision, ReviewTicket
from contracts.search_attributes import parse_review_ticket
from tollgate.intake.repeat import ended_without_outcome
from workflows.search_attributes import REVIEW_TICKET, STATE

#: How long a decision waits for a worker to take it before the reviewer is told so (the HTTP
#: API answers 503, the CLI exits 3): the update may still be delivered later, so the reviewer
#: reads the review again before deciding again.
DECISION_TIMEOUT = timedelta(seconds=30)
#: How long the ``review_ticket`` query of a run waiting for review may wait for a worker to
#: answer (``review show``, the review service's detail): with none running, the reader is told
#: so (the CLI exits 3) instead of hanging.
QUERY_TIMEOUT = timedelta(seconds=10)
#: How long the ``review_ticket`` query of a run that has finished may wait for a worker to
#: replay it (``review show``, the review service's detail): the record is PostgreSQL's, the
#: ticket only adds its risk and evidence, so a reader is not held the running run's 10 s
#: when no worker is up. A worker that is up answers a finished run's replay well within it.
FINISHED_QUERY_TIMEOUT = timedelta(seconds=2)


#: The reviewers' queue: runs waiting for review now. A run that closed while waiting (terminated
#: by hand, failed, timed out, or continued as new into the run that waits now) keeps showing
#: ``TollgateState = AWAITING_REVIEW`` in visibility, so the state alone lists it.
REVIEW_QUEUE = "TollgateState = 'AWAITING_REVIEW' AND ExecutionStatus = 'Running'"


def open_end(state: str | None, ended: str | None) -> str | None:
    """How the run ended with no outcome, while ``state`` (the record's) is not final yet; None
    once an end is recorded (``tollgate ops close``'s STOPPED, say): that end is the answer,
    and "no outcome" beside it would contradict it. The CLI, the review API and the inbox all
    say it so."""
    return None if state in TERMINAL_STATES else ended


def ended_state(state: str | None, ended: str | None) -> str | None:
    """The last state shown, with how the run ended when it ended with no outcome; a final
    state (an end ``tollgate ops close`` recorded, say) is an end of its own, shown as it is."""
    ended = open_end(state, ended)
    return f"{state} (run {ended}, no outcome)" if ended and state else state


def with_reason(shown: str | None, state: str | None, event: dict[str, Any]) -> str | None:
    """``shown`` (what ``ended_state`` made of ``state``) with the reason the event's record
    gives, as ``tollgate trace``'s first line has it (``STOPPED (daily_limit)``), for a final
    state the record holds too: a bare STOPPED never said why. A run that ended with no outcome
    is not final (its state is shown with how it ended instead). ``review show`` and
    ``ops state`` say it so."""
    reason = recorded_reason(state, event)
    return shown if reason is None else f"{shown} ({reason})"


def recorded_reason(state: str | None, event: dict[str, Any]) -> str | None:
    """The reason the event's record gives for ``state``, when that is its final state."""
    reason = event.get("reason_code")
    if state not in TERMINAL_STATES or not reason or event.get("state") != state:
        return None
    return str(reason)


class RunEnd(NamedTuple):
    """How one run stands, from ``describe()`` (no worker needed)."""

    #: ``ended_without_outcome``: None while it runs, once it completed, or for no such run.
    ended: str | None
    #: The TollgateState it shows; None for no such run.
    state: str | None
    running: bool


async def how_it_ended(handle: WorkflowHandle[Any, Any]) -> RunEnd:
    """How the run stands: whether it runs, how it ended with no outcome, the state it shows."""
    from temporalio.service import RPCError, RPCStatusCode

    try:
        found = await handle.describe()
    except RPCError as exc:
        if exc.status in (RPCStatusCode.NOT_FOUND, RPCStatusCode.INVALID_ARGUMENT):
            return RunEnd(None, None, running=False)
        raise
    return RunEnd(ended_without_outcome(found.status), found.typed_search_attributes.get(STATE),
                  running=found.status == WorkflowExecutionStatus.RUNNING)


class DecisionNotTaken(Exception):
    """No worker took the decision within its patience (it may still be delivered later)."""


async def deliver_decision(handle: WorkflowHandle[Any, Any], decision: ReviewDecision,
                           patience: timedelta = DECISION_TIMEOUT) -> ReviewAck:
    """The ``review`` update, one message; ``DecisionNotTaken`` after ``patience``. The
    validator's refusal and the server's errors come through as the SDK raises them."""
    try:
        return await within(
            handle.execute_update("review", decision, result_type=ReviewAck),
            patience.total_seconds())
    except (TimeoutError, WorkflowUpdateRPCTimeoutOrCancelledError):
        # The deadline cancels the call, which the SDK reports as its own error, not a
        # TimeoutError (a cancel from outside is raised as the cancel: ``within``).
        raise DecisionNotTaken from None


@dataclass(frozen=True)
class ListedTicket:
    """What a decision must name, read from a listing entry's search attributes."""

    request_id: str
    draft_version: int

    @property
    def seen(self) -> str:
        """The ``--seen`` token the CLI's decisions carry (``vN:REQUEST``)."""
        return f"v{self.draft_version}:{self.request_id}"


def listed_ticket(execution: WorkflowExecution) -> ListedTicket | None:
    """The open review's ticket from a ``list_workflows`` entry or a ``describe()``; None when the
    run shows none (from before the attribute, not waiting for review, or unreadable)."""
    attrs = execution.typed_search_attributes
    if attrs.get(STATE) != EventState.AWAITING_REVIEW.value:
        return None  # a ticket names an open review only: left on another state it names none
    found = parse_review_ticket(attrs.get(REVIEW_TICKET))
    return ListedTicket(request_id=found[0], draft_version=found[1]) if found else None


@dataclass(frozen=True)
class RunReview:
    """One run's review as ``open_review`` found it."""

    running: bool
    #: The open review; None while the run is not waiting for one.
    ticket: ListedTicket | None
    #: The ticket came from the ``review_ticket`` query (a run that shows none).
    asked: bool = False


async def open_review(handle: WorkflowHandle[Any, Any]) -> RunReview:
    """The open review of one run, from ``describe()`` (its search attributes, as current as the
    run itself and answered without a worker); the ``review_ticket`` query only for a run that
    waits for review and shows no ticket."""
    described = await handle.describe()
    if described.status != WorkflowExecutionStatus.RUNNING:
        return RunReview(running=False, ticket=None)
    listed = listed_ticket(described)
    waiting = described.typed_search_attributes.get(STATE) == EventState.AWAITING_REVIEW.value
    if listed is not None or not waiting:
        return RunReview(running=True, ticket=listed)
    asked = await handle.query("review_ticket", result_type=ReviewTicket)
    if asked.state != EventState.AWAITING_REVIEW or asked.request_id is None:
        return RunReview(running=True, ticket=None, asked=True)
    return RunReview(running=True, asked=True, ticket=ListedTicket(
        request_id=asked.request_id, draft_version=asked.draft_version or 1))
