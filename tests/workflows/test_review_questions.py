"""Every version answers every question of its review (issue 28 item 2), on the time-skipping
server with the real activities and the offline drafter: a second request-info keeps the first
answer, and the questions survive a continue-as-new at the gate's hold."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import asyncpg
import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.service import RPCError
from temporalio.testing import WorkflowEnvironment

from contracts import EventState
from contracts.actions import WakeUp
from tests.conftest import CODEC, Handle, signed_event, start, wait_review
from tests.eventually import eventually
from tests.workflows.review_helpers import (
    _decisions_sent_as_an_edge,
    decide,
    new_customer,
    seed_overdue_reviews,
    sent_to,
    wait_draft,
)
from tollgate.dev.standins import StandIns
from workflows.process_event import ProcessEventWorkflow
from workflows.timeouts import GATE_HOLD_RECHECK

__all__ = ["_decisions_sent_as_an_edge"]  # the autouse fixture ``decide`` needs

DUE, PET = "When is it due?", "Which pet is it for?"
#: How long one query may wait for a run to answer (a run answers in well under a second).
QUERY_PATIENCE = timedelta(seconds=5)


async def drafts_asked(handle: Handle) -> list[tuple[int, list[str]]]:
    """(version, reviewer_notes) of each draft_message this run of ``handle`` scheduled."""
    asked = []
    async for event in handle.fetch_history_events():
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            attrs = event.activity_task_scheduled_event_attributes
            if attrs.activity_type.name == "draft_message":
                (clear,) = await CODEC.decode(attrs.input.payloads)  # history is ciphertext
                request = json.loads(clear.data)
                asked.append((request["version"], request["reviewer_notes"]))
    return asked


def answers_both_in_order(third: dict[str, Any]) -> None:
    message = third["draft"]["message"]
    assert message.startswith(third["previous_message"])  # v2's answer is kept
    assert message.index("The date is ") < message.index("This reminder is about Miu's care.")
    assert third["answering"] == PET and third["draft"]["unknowns"] == []


async def test_a_second_question_gets_a_version_that_answers_both(
    worker_client: tuple[Client, str], standins: StandIns,
) -> None:
    client, queue = worker_client
    customer = new_customer(standins)
    handle = await start(client, queue, signed_event(customer))
    assert (await decide(handle, await wait_review(handle), "request_info", reason=DUE)).accepted
    second = await wait_draft(handle, 2)
    assert (await decide(handle, second, "request_info", reason=PET)).accepted
    third = await wait_draft(handle, 3)
    answers_both_in_order(third)
    assert await drafts_asked(handle) == [(1, []), (2, [DUE]), (3, [DUE, PET])]
    assert (await decide(handle, third, "approve")).accepted
    assert (await handle.result()).state == EventState.SUCCEEDED
    sent = [m["body"] for m in standins.messaging.messages() if m["recipient_ref"] == customer]
    assert sent == [third["draft"]["message"]]


async def test_the_questions_survive_a_continue_as_new_at_the_gate(
    env: WorkflowEnvironment, worker_client: tuple[Client, str], standins: StandIns,
    database_url: str, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Every hold round ends the run's history budget, so the hold below continues as new at
    # once (the worker's sandbox passes every module through: the workflow sees this patch).
    monkeypatch.setattr("workflows.holds.budget_spent", lambda: True)
    client, queue = worker_client
    customer = new_customer(standins)
    handle = await start(client, queue, signed_event(customer))
    first = await wait_review(handle)
    seeded = await seed_overdue_reviews(database_url, "acme", 20)  # acme's backlog_limit
    try:
        assert (await decide(handle, first, "request_info", reason=DUE)).accepted
        await eventually(lambda: handle.query("state"), "v2 held at the gate",
                         until=lambda s: s == EventState.HELD_AT_GATE, timeout=20)
        await env.sleep(GATE_HOLD_RECHECK * 2)  # the fallback timer: a round, then a new run
    finally:
        conn = await asyncpg.connect(database_url)
        try:  # reviewers catch up
            await conn.execute("UPDATE events SET state = 'REJECTED' WHERE workflow_id = ANY($1)",
                               seeded)
        finally:
            await conn.close()
    # The handle from the start names the first run; from here on, whichever run is current.
    handle = client.get_workflow_handle_for(ProcessEventWorkflow.run, handle.id)
    await handle.signal("wake", WakeUp(cause="gate:acme"))
    # The wake-up ends this run too (its budget is spent): a query may meet the run closing,
    # which the test server never answers; a short RPC timeout asks the new run instead of
    # waiting out the default 30 s.
    second = await eventually(
        lambda: handle.query("review_ticket", rpc_timeout=QUERY_PATIENCE),
        "v2 in review after the hold",
        until=lambda t: t["state"] == EventState.AWAITING_REVIEW and t["draft_version"] == 2,
        timeout=60, ignoring=(RPCError,))
    described = (await handle.describe()).raw_description.workflow_execution_info
    assert described.first_run_id != described.execution.run_id, "no continue-as-new happened"
    assert (await decide(handle, second, "request_info", reason=PET)).accepted
    third = await wait_draft(handle, 3)
    answers_both_in_order(third)
    # The run that drafted v3 started after the one that heard the first question.
    assert await drafts_asked(handle) == [(3, [DUE, PET])]
    assert (await decide(handle, third, "approve")).accepted
    assert (await handle.result()).state == EventState.SUCCEEDED
    assert sent_to(standins, customer) == 1
