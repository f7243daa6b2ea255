"""``approve_and_mint`` retried (activities/approval.py): an attempt after the first that finds
its approval recorded keeps the first attempt's decision, counting only the sends made before
that approval; a first attempt always counts afresh, even with the same approval on record (a
lost workflow task's re-run, which may decide again). Stores are fakes: the daily limit filled
after the approval was recorded, as the fault test lays it on PostgreSQL
(tests/faults/test_approval_step.py)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

from temporalio.testing import ActivityEnvironment

from activities.action_token import ActionTokenActivities
from activities.approval import ApprovalActivities
from activities.review import ReviewActivities
from activities.steps import StepActivities
from contracts import ActionRequest, DraftResult, EventRef, EventState, StepRecord, Transition
from contracts.actions import MintRequest
from contracts.fused_steps import ApprovalResult, ApprovalStep
from contracts.review import GateCountsRequest
from tests.activities.tenant_contacts_support import acme_policy

REF = EventRef(workflow_id="event/acme/k-retry", tenant_id="acme", event_id="e-retry",
               event_type="CARE_DUE", entity_id="C-1", correlation_id="c", schema_version=3)
APPROVED_AT = datetime(2026, 12, 3, 6, 0, tzinfo=UTC)
LIMIT = acme_policy().rule.max_messages_per_customer_per_day


class Store:
    """The approval recorded at ``APPROVED_AT`` (or not), the limit filled just after it."""

    def __init__(self, recorded: bool) -> None:
        self.recorded = recorded
        self.writes: list[StepRecord] = []

    async def recorded_at(self, step: StepRecord) -> datetime | None:
        return APPROVED_AT if self.recorded else None

    async def record_step(self, step: StepRecord) -> bool:
        self.writes.append(step)
        return True

    async def record_refused_decision(self, **_: object) -> None:
        raise AssertionError("not called")

    async def count_gate_inputs(self, *, sent_before: datetime | None = None,
                                **_: object) -> tuple[int, int]:
        return (0 if sent_before == APPROVED_AT else LIMIT), 0

    async def has_approval(self, workflow_id: str, draft_version: int) -> bool:
        return True


def approval_step() -> ApprovalStep:
    now = datetime.now(UTC)
    action = ActionRequest(ref=REF, adapter="messaging", action="send_message",
                           action_key="k-retry", channel="sms", body="hi", policy_version="v",
                           approved_by="an.tran")
    return ApprovalStep(
        counts=GateCountsRequest(ref=REF, adapter="messaging", action="send_message", as_of=now),
        policy=acme_policy(),
        draft=DraftResult(status="unreadable", version=1, provider="offline", model="m",
                          prompt_version="p"),
        approval=StepRecord(ref=REF, transitions=[Transition(
            seq=7, from_state=EventState.AWAITING_REVIEW, to_state=EventState.APPROVED,
            actor="reviewer:an.tran", reason="approved by an.tran")]),
        mint=MintRequest(action=action, draft_version=1, request_id="rq-1", as_of=now))


async def attempt(number: int, store: Store) -> ApprovalResult:
    activities = ApprovalActivities(
        ReviewActivities(store), StepActivities(store),
        ActionTokenActivities(store, b"k" * 32, timedelta(minutes=5)))
    env = ActivityEnvironment()
    env.info = dataclasses.replace(env.info, attempt=number, is_local=True)
    result: ApprovalResult = await env.run(activities.approve_and_mint, approval_step())
    return result


async def test_a_retry_that_finds_its_approval_keeps_it() -> None:
    store = Store(recorded=True)
    result = await attempt(2, store)
    assert result.minted is not None and result.counts.sends_today == 0
    assert store.writes == []  # recorded already: nothing written again


async def test_a_first_attempt_counts_afresh_even_with_the_approval_on_record() -> None:
    store = Store(recorded=True)
    result = await attempt(1, store)
    assert result.minted is None and result.counts.sends_today == LIMIT
    assert store.writes == []


async def test_a_retry_with_nothing_recorded_counts_afresh() -> None:
    store = Store(recorded=False)  # the earlier attempts failed before the record
    result = await attempt(3, store)
    assert result.minted is None and result.counts.sends_today == LIMIT
    assert store.writes == []
