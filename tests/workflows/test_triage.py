"""Triage (issue 32) through the whole path on the time-skipping server, with the real
activities, PostgreSQL, the offline triage and the helpdesk stand-in over HTTP: auto-routed
(assigned once, receipt), reviewed (a reply waits for a reviewer, approved, assigned with the
reply once) and refused (a route off the tenant's list: FAILED_VALIDATION, nothing assigned)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import asyncpg
from temporalio.client import Client

from contracts import EventState, ReviewDecision
from policies.signing import sign_json
from tests.conftest import TENANT_SECRETS, fresh_key, start, wait_review
from tests.edge import send_decision
from tests.eventually import eventually
from tollgate.dev.demo_triage import message_received
from tollgate.dev.standins import StandIns


def _message(tenant: str, customer: str, body: str, **fields: str) -> tuple[str, str]:
    key = fresh_key("msg")
    event = message_received(tenant, customer, key, body=body, now=datetime.now(UTC), **fields)
    return sign_json(json.dumps(event), TENANT_SECRETS), event["payload"]["thread_id"]


async def _rows(database_url: str, sql: str, *args: object) -> list[asyncpg.Record]:
    conn = await asyncpg.connect(database_url)
    try:
        return list(await conn.fetch(sql, *args))
    finally:
        await conn.close()


async def test_a_booking_question_is_auto_routed_once_with_a_receipt(
    worker_client: tuple[Client, str], standins: StandIns, database_url: str
) -> None:
    client, queue = worker_client
    messages_before = standins.messaging.message_count
    raw, thread = _message("acme", "C-1001", "Hello, can I book an appointment for Miu?")
    handle = await start(client, queue, raw)
    outcome = await handle.result()

    assert outcome.state == EventState.SUCCEEDED, outcome
    [assignment] = standins.helpdesk.for_ticket(thread)
    assert (assignment["queue"], assignment["intent"]) == ("front_desk", "booking")
    assert assignment["reply"] is None  # no reply ever goes out without a reviewer
    assert outcome.receipt is not None
    assert outcome.receipt.external_id == assignment["id"]
    assert standins.helpdesk.posts_for(outcome.receipt.action_key) == 1
    assert standins.messaging.message_count == messages_before
    decisions = await _rows(database_url, "SELECT reviewer, role, decision FROM review_decisions"
                            " WHERE workflow_id = $1 AND accepted", handle.id)
    assert [tuple(d) for d in decisions] == [("policy", "auto_route", "approve")]
    states = [r["to_state"] for r in await _rows(
        database_url, "SELECT to_state FROM state_transitions WHERE workflow_id = $1"
        " ORDER BY seq", handle.id)]
    assert "AWAITING_REVIEW" not in states
    assert states[-4:] == ["DRAFTED", "APPROVED", "EXECUTING", "SUCCEEDED"]


async def test_a_reply_waits_for_a_reviewer_then_is_assigned_with_the_reply_once(
    worker_client: tuple[Client, str], standins: StandIns, database_url: str
) -> None:
    client, queue = worker_client
    raw, thread = _message("acme", "C-1001", "I was charged twice, I want a refund please.",
                           sender_name="Lan Tran")
    handle = await start(client, queue, raw)
    ticket = await wait_review(handle)

    assert standins.helpdesk.for_ticket(thread) == []  # nothing assigned while it waits
    proposed = json.loads(ticket["draft"]["message"])
    assert (proposed["queue"], proposed["intent"]) == ("billing", "refund_request")
    assert proposed["reply"].startswith("Hi Lan,") and "order number" in proposed["reply"]
    assert "order_id: no order number in the message or the event" in ticket["draft"]["unknowns"]
    ack = await send_decision(handle, ReviewDecision(
        request_id=ticket["request_id"], decision="approve", reviewer="an.tran",
        role="support_lead", reason="refund goes to billing; reply is fine",
        draft_version=ticket["draft_version"]), database_url=database_url)
    assert ack.accepted, ack
    outcome = await handle.result()

    assert outcome.state == EventState.SUCCEEDED, outcome
    [assignment] = standins.helpdesk.for_ticket(thread)
    assert assignment["queue"] == "billing" and assignment["reply"] == proposed["reply"]
    assert outcome.receipt is not None and outcome.receipt.external_id == assignment["id"]
    assert standins.helpdesk.posts_for(outcome.receipt.action_key) == 1


async def test_a_route_off_the_tenants_list_is_refused_and_nothing_is_assigned(
    worker_client: tuple[Client, str], standins: StandIns, database_url: str
) -> None:
    client, queue = worker_client
    # globex has no billing queue (policies/versions/2026-12-02.json); the model proposes one.
    raw, thread = _message("globex", "C-2001", "Please refund order O-77, it never arrived.",
                           order_id="O-77")
    handle = await start(client, queue, raw)
    outcome = await handle.result()

    assert outcome.state == EventState.FAILED_VALIDATION
    assert outcome.reason_code == "route_not_allowed"
    assert outcome.receipt is None
    assert standins.helpdesk.for_ticket(thread) == []
    drafts = await _rows(database_url, "SELECT status, draft, findings FROM drafts"
                         " WHERE workflow_id = $1", handle.id)
    assert [d["status"] for d in drafts] == ["failed_validation"]
    assert json.loads(drafts[0]["draft"]) is None  # a refused proposal is kept as no assignment
    assert "route_not_allowed" in json.loads(drafts[0]["findings"])
    receipts = await _rows(database_url, "SELECT 1 FROM receipts WHERE event_id = $1",
                           outcome.event_id)
    assert receipts == []


async def test_an_assignment_whose_answer_was_lost_is_found_by_key_not_sent_again(
    worker_client: tuple[Client, str], standins: StandIns, database_url: str
) -> None:
    client, queue = worker_client
    raw, thread = _message("acme", "C-1001", "Could I schedule a check-up for Miu?")
    standins.helpdesk.inject("fail_after_write")  # stored, then 504: the write is unknown
    handle = await start(client, queue, raw)
    outcome = await handle.result()

    assert outcome.state == EventState.SUCCEEDED, outcome
    assert outcome.reason_code == "found_at_target"
    [assignment] = standins.helpdesk.for_ticket(thread)
    assert outcome.receipt is not None and outcome.receipt.external_id == assignment["id"]
    assert standins.helpdesk.posts_for(outcome.receipt.action_key) == 1
    states = [r["to_state"] for r in await _rows(
        database_url, "SELECT to_state FROM state_transitions WHERE workflow_id = $1"
        " ORDER BY seq", handle.id)]
    assert states[-3:] == ["UNKNOWN_WRITE", "RECONCILING", "SUCCEEDED"]


async def test_each_version_answers_every_question_of_the_review_then_one_assignment(
    worker_client: tuple[Client, str], standins: StandIns, database_url: str
) -> None:
    client, queue = worker_client
    raw, thread = _message("acme", "C-1001", "Miu has been vomiting since last night.")
    handle = await start(client, queue, raw)
    first = await wait_review(handle)
    assert json.loads(first["draft"]["message"])["queue"] == "medical_team"
    urgent = "reviewer_question: reviewer asked: \u201cis this urgent?\u201d" \
        " (no context fact answers it)"
    tickets = [first]
    for version, question in ((2, "is this urgent?"), (3, "which team gets it?")):
        asked = await send_decision(handle, ReviewDecision(
            request_id=tickets[-1]["request_id"], decision="request_info", reviewer="an.tran",
            role="support_lead", reason=question, draft_version=version - 1),
            database_url=database_url)
        assert asked.accepted, asked
        tickets.append(await eventually(
            lambda: handle.query("review_ticket"), f"draft v{version} under review",
            timeout=20, until=lambda t, v=version: (
                t["state"] == EventState.AWAITING_REVIEW and t["draft_version"] == v)))
    second, third = tickets[1:]
    # v2 names the one question nobody can answer from the facts; v3 still does, beside the
    # answer to the second question (the route), in the order they were asked.
    assert second["draft"]["unknowns"] == [urgent]
    assert third["draft"]["unknowns"] == [urgent]
    assert "It goes to medical_team as a medical question" in third["draft"]["reason"]
    assert standins.helpdesk.for_ticket(thread) == []
    ack = await send_decision(handle, ReviewDecision(
        request_id=third["request_id"], decision="approve", reviewer="an.tran",
        role="support_lead", reason="route to the vets", draft_version=3),
        database_url=database_url)
    assert ack.accepted, ack
    outcome = await handle.result()

    assert outcome.state == EventState.SUCCEEDED
    [assignment] = standins.helpdesk.for_ticket(thread)
    assert (assignment["queue"], assignment["intent"]) == ("medical_team", "medical_question")
