"""The policy gate and human review on the time-skipping server, with the real activities,
PostgreSQL and stand-ins: who may decide, what a refusal records, SLA escalation and expiry,
request-info rounds, the backlog guard and the daily limit. Every test uses customers of its own,
so the daily limit of one never counts another test's sends (helpers: review_helpers.py; the
review commands: test_review_cli.py)."""

from __future__ import annotations

import asyncio
import json
import uuid

import asyncpg
from structlog.testing import capture_logs
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from contracts import EventState, ReviewDecision
from contracts.actions import WakeUp
from tests.conftest import CODEC, signed_event, start, wait_review
from tests.workflows.review_helpers import (
    _decisions_sent_as_an_edge,
    decide,
    fetch,
    new_customer,
    refusals,
    seed_overdue_reviews,
    sent_to,
    wait_draft,
    wait_state,
)
from tollgate.cli.review_decide import review_decide
from tollgate.config.settings import Settings
from tollgate.dev.standins import StandIns
from workflows.search_attributes import REVIEW_DUE
from workflows.timeouts import GATE_HOLD_RECHECK

__all__ = ["_decisions_sent_as_an_edge"]  # the autouse fixture: refusals audited as an edge's


async def test_authorised_approval_sends_one_message(
    worker_client: tuple[Client, str], standins: StandIns, database_url: str
) -> None:
    client, queue = worker_client
    customer = new_customer(standins)
    handle = await start(client, queue, signed_event(customer))
    ticket = await wait_review(handle)
    assert ticket["review_due_at"] is not None
    described = await handle.describe()
    assert described.typed_search_attributes.get(REVIEW_DUE) is not None

    ack = await decide(handle, ticket, tenant_id="acme")
    assert ack.accepted, ack.message
    outcome = await handle.result()
    assert outcome.state == EventState.SUCCEEDED
    assert sent_to(standins, customer) == 1
    rows = await fetch(database_url, "SELECT decision, reviewer, accepted FROM review_decisions"
                       " WHERE workflow_id = $1", handle.id)
    assert [(r["decision"], r["reviewer"], r["accepted"]) for r in rows] == [
        ("approve", "an.tran", True)]


async def test_each_refused_kind_is_recorded_and_changes_nothing(
    worker_client: tuple[Client, str], standins: StandIns, database_url: str
) -> None:
    client, queue = worker_client
    customer = new_customer(standins)
    handle = await start(client, queue, signed_event(customer))
    ticket = await wait_review(handle)
    attempts = {
        "role_not_allowed": dict(role="intern"),
        "separation_of_duties": dict(reviewer="CRM\u2010Scheduler"),  # the requester, disguised
        "stale_draft_version": dict(draft_version=ticket["draft_version"] + 1),
        "wrong_request": dict(request_id=str(uuid.uuid4())),
        "cross_tenant": dict(tenant_id="globex"),
        # Refused at validation: accepted, a NUL could never be recorded (issue 25).
        "malformed_decision": dict(reason="checked\x00"),
    }
    for code, overrides in attempts.items():
        ack = await decide(handle, ticket, **overrides)
        assert (ack.accepted, ack.reason_code, ack.state) == (
            False, code, EventState.AWAITING_REVIEW)
    # A signal carries no verified identity (no validator runs on it): refused and recorded,
    # never silently dropped, whoever it names.
    await handle.signal("approve", ReviewDecision(
        request_id=ticket["request_id"], decision="approve", reviewer="an.tran",
        role="care_lead", reason="by signal", draft_version=ticket["draft_version"]))
    assert sent_to(standins, customer) == 0

    assert (await decide(handle, ticket, "reject", reason="wrong pet")).accepted
    outcome = await handle.result()
    assert outcome.state == EventState.REJECTED
    # The validator refused the updates before history: only the accepted one is in it.
    updates = [e for e in (await handle.fetch_history()).events if e.event_type
               == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED]
    assert len(updates) == 1, f"{len(updates)} review updates in the history"
    # After the workflow closed, the CLI records the decision itself.
    code = await review_decide(client, Settings.from_env({"DATABASE_URL": database_url}),
                               handle.id, decision="approve", reviewer="an.tran",
                               role="care_lead", reason="too late", tenant=None,
                               draft_version=ticket["draft_version"],
                               request_id=ticket["request_id"])
    assert code == 1
    assert await refusals(database_url, handle.id) == [
        "role_not_allowed", "separation_of_duties", "stale_draft_version", "wrong_request",
        "cross_tenant", "malformed_decision", "unverified_signal", "review_closed"]
    assert sent_to(standins, customer) == 0


async def test_two_reviewers_racing_exactly_one_wins(
    worker_client: tuple[Client, str], standins: StandIns, database_url: str
) -> None:
    client, queue = worker_client
    customer = new_customer(standins)
    handle = await start(client, queue, signed_event(customer))
    ticket = await wait_review(handle)
    acks = await asyncio.gather(decide(handle, ticket, reviewer="an.tran"),
                                decide(handle, ticket, reviewer="binh.le", role="reviewer"))
    assert sorted((a.accepted, a.reason_code or "") for a in acks) == [
        (False, "review_closed"), (True, "")]
    outcome = await handle.result()
    assert outcome.state == EventState.SUCCEEDED
    assert sent_to(standins, customer) == 1
    assert await refusals(database_url, handle.id) == ["review_closed"]
    winner = [r["reviewer"] for r in await fetch(
        database_url, "SELECT reviewer FROM review_decisions WHERE workflow_id = $1 AND accepted",
        handle.id)]
    assert len(winner) == 1


async def test_sla_escalates_to_fallback_owner_then_expires_without_sending(
    worker_client: tuple[Client, str], standins: StandIns, database_url: str
) -> None:
    client, queue = worker_client
    customer = new_customer(standins, first_name="Quynh")
    handle = await start(client, queue, signed_event(customer))
    ticket = await wait_review(handle)
    with capture_logs() as logs:
        outcome = await handle.result()  # skips the 4 h SLA, then the 24 h deadline
    assert outcome.state == EventState.EXPIRED
    assert sent_to(standins, customer) == 0
    notices = await fetch(database_url, "SELECT actor, detail FROM audit WHERE action ="
                          " 'review_escalated' AND target = $1", handle.id)
    assert len(notices) == 1
    detail = json.loads(notices[0]["detail"])
    assert detail["fallback_owner"] == "care-ops-oncall"
    assert detail["request_id"] == ticket["request_id"]
    states = [r["to_state"] for r in await fetch(
        database_url, "SELECT to_state FROM state_transitions WHERE workflow_id = $1 ORDER BY seq",
        handle.id)]
    assert states[-3:] == ["AWAITING_REVIEW", "AWAITING_REVIEW", "EXPIRED"]  # opened, escalated
    escalated = [e for e in logs if e["event"] == "review_escalated"]
    assert escalated and escalated[0]["fallback_owner"] == "care-ops-oncall"
    assert "Quynh" not in repr(logs) and customer not in repr(escalated)


async def test_request_info_round_trip_makes_a_new_draft_version(
    worker_client: tuple[Client, str], standins: StandIns, database_url: str
) -> None:
    client, queue = worker_client
    customer = new_customer(standins)
    handle = await start(client, queue, signed_event(customer))
    first = await wait_review(handle)
    asked = await decide(handle, first, "request_info", reason="which clinic?")
    assert asked.accepted
    second = await wait_draft(handle, 2)
    assert second["request_id"] != first["request_id"]

    assert not (await decide(handle, first)).accepted  # the old request: wrong_request
    assert not (await decide(handle, second, draft_version=1)).accepted  # stale
    assert (await decide(handle, second)).accepted
    outcome = await handle.result()
    assert outcome.state == EventState.SUCCEEDED
    assert sent_to(standins, customer) == 1
    assert await refusals(database_url, handle.id) == ["wrong_request", "stale_draft_version"]
    versions = [r["version"] for r in await fetch(
        database_url, "SELECT version FROM drafts WHERE workflow_id = $1 ORDER BY version",
        handle.id)]
    assert versions == [1, 2]
    # The second draft was asked for with the reviewer's note as context.
    notes = []
    async for event in handle.fetch_history_events():
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            attrs = event.activity_task_scheduled_event_attributes
            if attrs.activity_type.name == "draft_message":
                # History holds ciphertext; the test's key ring reads it back.
                (clear,) = await CODEC.decode(attrs.input.payloads)
                request = json.loads(clear.data)
                notes.append((request["version"], request["reviewer_note"]))
    assert notes == [(1, None), (2, "which clinic?")]


async def test_request_info_rounds_are_bounded_by_policy(
    worker_client: tuple[Client, str], standins: StandIns, database_url: str
) -> None:
    client, queue = worker_client
    customer = new_customer(standins, tenant="globex")  # max_info_rounds 1
    handle = await start(client, queue, signed_event(customer, tenant="globex"))
    assert (await decide(handle, await wait_review(handle), "request_info")).accepted
    second = await wait_draft(handle, 2)
    again = await decide(handle, second, "request_info")
    assert not again.accepted
    assert (await decide(handle, second, "reject")).accepted
    assert (await handle.result()).state == EventState.REJECTED
    assert await refusals(database_url, handle.id) == ["info_rounds_exhausted"]


async def test_backlog_guard_holds_new_events_until_reviews_catch_up(
    env: WorkflowEnvironment, worker_client: tuple[Client, str], standins: StandIns,
    database_url: str,
) -> None:
    client, queue = worker_client
    seeded = await seed_overdue_reviews(database_url, "globex", 10)  # globex backlog_limit 10
    customer = new_customer(standins, tenant="globex")
    handle = await start(client, queue, signed_event(customer, tenant="globex"))
    await wait_state(handle, EventState.HELD_AT_GATE)
    ticket = await handle.query("review_ticket")
    assert ticket["request_id"] is None
    refused = await decide(handle, {"request_id": "none", "draft_version": 1})
    assert not refused.accepted
    await env.sleep(GATE_HOLD_RECHECK * 3)  # still over the limit: still held
    assert await handle.query("state") == EventState.HELD_AT_GATE
    assert sent_to(standins, customer) == 0
    row = (await fetch(database_url, "SELECT state FROM events WHERE workflow_id = $1",
                       handle.id))[0]
    assert row["state"] == "HELD_AT_GATE"

    conn = await asyncpg.connect(database_url)
    try:  # reviewers catch up
        await conn.execute("UPDATE events SET state = 'REJECTED' WHERE workflow_id = ANY($1)",
                           seeded)
    finally:
        await conn.close()
    # The release's wake-up (a decided review): the run looks again now, not on its fallback.
    await handle.signal("wake", WakeUp(cause="gate:globex"))
    ticket = await wait_review(handle)
    assert (await decide(handle, ticket)).accepted
    assert (await handle.result()).state == EventState.SUCCEEDED
    assert sent_to(standins, customer) == 1
    states = [r["to_state"] for r in await fetch(
        database_url, "SELECT to_state FROM state_transitions WHERE workflow_id = $1 ORDER BY seq",
        handle.id)]
    assert states[3:7] == ["DRAFTED", "HELD_AT_GATE", "AWAITING_REVIEW", "APPROVED"]
    assert await refusals(database_url, handle.id) == ["review_closed"]


async def test_daily_limit_stops_further_sends_to_a_customer(
    worker_client: tuple[Client, str], standins: StandIns, database_url: str
) -> None:
    client, queue = worker_client
    customer = new_customer(standins, tenant="globex")  # one message per customer per day
    # One after the other: an event admitted after a newer one for its customer is superseded.
    first = await start(client, queue, signed_event(customer, tenant="globex"))
    tickets = [await wait_review(first)]
    second = await start(client, queue, signed_event(customer, tenant="globex"))
    tickets.append(await wait_review(second))  # both passed the gate with nothing sent yet
    assert (await decide(first, tickets[0])).accepted
    assert (await first.result()).state == EventState.SUCCEEDED
    # Approved too late: the send of the first counts now.
    assert (await decide(second, tickets[1])).accepted
    late = await second.result()
    assert (late.state, late.reason_code) == (EventState.STOPPED, "daily_limit")
    # Stopped by the re-count: no approval written, and the numbers go on without a gap.
    rows = await fetch(database_url, "SELECT seq, to_state FROM state_transitions"
                       " WHERE workflow_id = $1 ORDER BY seq", second.id)
    assert "APPROVED" not in [r["to_state"] for r in rows]
    assert [r["seq"] for r in rows] == list(range(rows[0]["seq"], rows[0]["seq"] + len(rows)))
    # A new event stops at the gate: nobody is asked to review it.
    third = await start(client, queue, signed_event(customer, tenant="globex"))
    stopped = await third.result()
    assert (stopped.state, stopped.reason_code) == (EventState.STOPPED, "daily_limit")
    rows = await fetch(database_url, "SELECT seq, to_state FROM state_transitions"
                       " WHERE workflow_id = $1 ORDER BY seq", third.id)
    assert "AWAITING_REVIEW" not in [r["to_state"] for r in rows]
    assert [r["seq"] for r in rows] == list(range(rows[0]["seq"], rows[0]["seq"] + len(rows)))
    assert sent_to(standins, customer) == 1
