"""What a ProcessEventWorkflow run hands to the run it continues as (``continue_as_new``) when it
spends its history budget while held (workflows/budget.py): everything the new run needs to
go on exactly where the old one was, and nothing it can read again."""

from __future__ import annotations

from typing import Literal

from contracts.actions import ExecuteRequest
from contracts.base import EventState, Frozen
from contracts.contacts import TenantContact
from contracts.drafting import DraftResult
from contracts.events import IntakeResult
from contracts.review import ReviewDecision


class RunCarry(Frozen):
    """``at``: where the new run resumes: at the gate's hold (``draft`` drafted, not yet in
    review) or at the send's hold (``send``: the approved action, its receipt seq given)."""

    at: Literal["gate", "send"]
    intake: IntakeResult
    fingerprint: str
    #: Deliveries answered so far: the new run tells a later one "duplicate", never "accepted".
    intake_calls: int
    seq: int
    state: EventState
    shown: EventState | None = None
    coalesce: bool = True
    context_fields: dict[str, str] = {}
    draft: DraftResult
    requester: str | None = None
    refusals: int = 0
    info_rounds: int = 0
    #: The review's request-info questions so far, oldest first, for the next draft version
    #: (empty in a carry made before 2026-12-02: that run's later versions answer only the
    #: questions asked after it continued).
    reviewer_notes: tuple[str, ...] = ()
    decision: ReviewDecision | None = None
    send: ExecuteRequest | None = None
    #: The send's task queue as the first run chose it (None: the main queue, older runs).
    queue: str | None = None
    #: Hold rounds already waited: the fallback timer's backoff goes on from there.
    hold_rounds: int = 0
    #: Runs this event has continued through so far (1 for the first continuation).
    generation: int = 1
    #: The tenant's own contact points the context step read, for a later draft version.
    tenant_contacts: tuple[TenantContact, ...] = ()
