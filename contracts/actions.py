"""Step 6: one business action, its receipt and the reconciler's answer."""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from contracts.base import EventRef, Frozen


class ReceiptStatus(StrEnum):
    PENDING = "PENDING"
    SUCCEEDED = "SUCCEEDED"
    REJECTED = "REJECTED"
    UNKNOWN = "UNKNOWN"
    #: Final: the rollout mode held the send back (shadow, or a canary's held part); the
    #: receipt records what would have gone out, and nothing ever sends it later.
    WOULD_SEND = "WOULD_SEND"


class ActionRequest(Frozen):
    """One business action. ``action_key`` derives from business data only
    (``policies.keys.action_key``), never from a run id."""

    ref: EventRef
    adapter: str
    action: str
    action_key: str
    channel: str
    body: Annotated[str, StringConstraints(min_length=1, max_length=1000)]
    policy_version: str
    approved_by: str


class Receipt(Frozen):
    action_key: str
    tenant_id: str
    event_id: str
    adapter: str
    action: str
    request_fingerprint: str
    status: ReceiptStatus
    external_id: str | None = None
    error_class: str | None = None
    error_code: str | None = None
    attempts: int = 0
    policy_version: str | None = None
    #: ``contracts.rollout.RolloutMode`` value the send step ran in; None on older receipts.
    rollout_mode: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None


class SendClosing(Frozen):
    """What the send needs to record its run's final state as the run would have (ADR 0057):
    the transition's number (the one after the send's EXECUTING) and the outcome's payload
    fingerprint; the rest (ref, policy version, receipt, reason) the send holds already."""

    seq: int
    payload_fingerprint: str | None = None


class ExecuteRequest(Frozen):
    """``action_token``: minted at approval (``MintedToken``), covering exactly this action;
    None only from runs started before the ``action-token`` patch, which the send refuses."""

    action: ActionRequest
    draft_version: int
    seq: int
    action_token: str | None = None
    #: Set by a run of the settle-closes shape (ADR 0057): the send records the run's final
    #: state with the receipt's final settle. None: the run records it itself afterwards.
    closing: SendClosing | None = None


class MintRequest(Frozen):
    """The approval an action token is minted for: the action as approved, the draft version
    and the review request the decision answered (with the action key, the token's id).
    ``as_of``: the workflow's time, the clock the send's check reads too (the server's)."""

    action: ActionRequest
    draft_version: int
    request_id: str
    as_of: datetime


class MintedToken(Frozen):
    """``token``: a bearer credential (``policies.action_token``), never logged; the run's
    history holds it encrypted. ``token_id``: the key of its single use."""

    token: str = Field(repr=False)
    token_id: str
    expires_at: datetime


class ExecuteResult(Frozen):
    """``held``: a kill switch covers this adapter/tenant; nothing was sent, try again later.
    ``lookup_window``: with ``unknown``, how long the target's own declaration says a write it
    holds may stay invisible to lookups (``TOLLGATE_TARGETS``); None: the runtime's default.
    The workflow hands it to the reconciler without a patch: replay does not compare a child's
    input, and a result recorded before the field existed reads None, the default it had then."""

    status: Literal["succeeded", "rejected", "unknown", "stopped", "held"]
    receipt: Receipt | None = None
    reason_code: str | None = None
    lookup_window: timedelta | None = None
    #: The request's ``closing.seq`` when the send recorded the run's final state with the
    #: receipt's settle (ADR 0057); None when it did not, and the run records it.
    closed_seq: int | None = None


class WakeUp(Frozen):
    """The ``wake`` signal: what a held run waited for may have been released (a kill switch
    reopened, a review backlog decided). The run looks again at once; nothing else changes, so
    a wake-up for a switch still closed (or a canary already spent) only costs one look."""

    cause: Annotated[str, StringConstraints(max_length=200)] = ""


class ReconcileRequest(Frozen):
    """``draft_version``, ``send_seq`` and ``action_token``: the send being reconciled (its
    approved draft, its transition number, its token), which the one keyed resend verifies
    again before it calls the target (ADR 0049); None in runs started before that.
    ``replay_of``: the dead letter whose approved replay this is (`tollgate ops dlq replay`).
    ``refused``: set only on the dead letter's copy, the code the resend was refused with."""

    ref: EventRef
    action: ActionRequest
    lookup_window: timedelta = timedelta(minutes=10)
    draft_version: int | None = None
    send_seq: int | None = None
    action_token: str | None = None
    replay_of: int | None = None
    refused: str | None = None


class ReplaySettle(Frozen):
    """A dead letter's replay settling its write (``ReceiptSettler.settle``'s ``replay``):
    replay ``number`` (None when its run id does not say) of dead letter ``dead_letter``, which
    settles it ``how`` ("found at the target", "resent", ...). When the receipt ends SUCCEEDED
    or REJECTED, the event that dead letter ended STOPPED follows it in the same transaction
    (ADR 0061)."""

    dead_letter: int
    number: int | None = None
    how: str


#: How a dead letter's replay run ended (``ReplayEnd.result``): its ``ReconcileResult`` status,
#: or ``failed`` (a step gave up for good) or ``cancelled`` (asked to stop) when it returned none.
ReplayOutcome = Literal["succeeded", "resent", "stopped", "rejected", "failed", "cancelled"]


class ReplayEnd(Frozen):
    """The end of replay ``number`` (None when its run id does not say) of dead letter
    ``dead_letter``, written by the replay's own run as it ends (ADR 0069): one
    ``dlq_replay_result`` audit row per (dead letter, replay), a repeat writes nothing."""

    dead_letter: int
    number: int | None = None
    result: ReplayOutcome


def replay_number(workflow_id: str) -> int | None:
    """The replay number a dead letter's replay run carries in its id
    (``reconcile/KEY/replay-N``: ``tollgate.ops.replay_in_flight.replay_workflow_id``), or None."""
    number = workflow_id.rpartition("/replay-")[2]
    return int(number) if number.isdigit() else None


#: The dead letter of a write nothing could confirm or rule out: the reconciler's, when its
#: lookups found nothing and a resend was not safe, and ``tollgate ops close --unresolved-write``'s
#: for a run terminated mid-send whose receipt the target does not hold. One code, owner and plan,
#: so the operator's path (docs/runbook.md, "Dead letters") is the same for both.
UNRECONCILED_CODE = "unreconciled_write"
UNRECONCILED_OWNER = "messaging-oncall"
UNRECONCILED_PLAN = ("Check the target for this action key by hand; if absent and the customer "
                     "still needs it, approve the dead letter and replay.")
#: The events row's reason code once a replay settled that dead letter's write (ADR 0061) ...
REPLAYED_CODE = "dead_letter_replayed"
#: ... once the receipt sweep found the write at the target (ADR 0063) ...
SWEPT_CODE = "receipt_swept"
#: ... once a replay of its dead letter found the receipt already settled and ran nothing.
FOUND_SETTLED_CODE = "receipt_already_settled"
#: The ends recorded after the event's run closed: a closed run's result cannot show them, and
#: a producer's repeat is answered with PostgreSQL's (ADR 0062).
RECORDED_AFTER_THE_RUN = frozenset({REPLAYED_CODE, SWEPT_CODE, FOUND_SETTLED_CODE})


#: The steps whose failure for good ends an event DEAD_LETTERED (workflows/failures.py).
FailedStep = Literal["load_context", "execute_action"]


class StepFailure(Frozen):
    """A step that failed for good (its retries spent, or a refusal such as
    ``no_approval_on_record``): the event ends DEAD_LETTERED with a dead letter for an operator.
    ``error_class`` and ``code`` are the taxonomy's (``contracts.errors``), or
    ``timeout``/``<step>_timed_out`` when the step never answered. ``action``: the send's, when
    the send step failed; ``seq``: the number the run gave the send step's APPROVED -> EXECUTING
    (it records DEAD_LETTERED after it), written with the dead letter when nothing recorded it
    (a refusal or a failure before the receipt: ``DeadLetterActivities``)."""

    ref: EventRef
    step: FailedStep
    error_class: str
    code: str
    action: ActionRequest | None = None
    seq: int | None = None


class ReconcileResult(Frozen):
    """``unverifiable``: only from ``lookup_write``, the target cannot be looked up at all, so
    waiting out the lookup window would tell nothing. ``refused``: only from ``resend_write``,
    the approval no longer covers the resend (``reason_code`` says why); nothing was sent."""

    status: Literal["succeeded", "resent", "stopped", "rejected", "unverifiable", "refused"]
    receipt: Receipt | None = None
    attempts: int = 0
    reason_code: str | None = None


class TargetCapabilities(Frozen):
    """What a target guarantees, declared per target in configuration (``TOLLGATE_TARGETS``).

    ``lookup``: the target answers "do you hold a write with this key?". ``dedupe``: a second
    write with the same key is a no-op at the target. Without lookup an unknown write is never
    waited on; without dedupe it is never resent; with neither it goes to an operator.
    ``lookup_window_s``: the longest a write the target holds may stay invisible to a lookup
    (its replication lag, with a margin); the reconciler looks for that long before it decides
    the write never landed. Unset: the runtime's 10 minutes.
    """

    lookup: bool
    dedupe: bool
    lookup_window_s: float | None = Field(default=None, gt=0, le=86_400)


def target_task_queue(main_queue: str, adapter: str) -> str:
    """The task queue a target's actions run on, beside the main one: its worker carries the
    target's rate limit, which the Temporal server then enforces across every worker process
    (docs/deploy.md, scale-out). The workflow and the worker assembly both name it here."""
    return f"{main_queue}-target-{adapter}"
