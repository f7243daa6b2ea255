"""What the review tests share: customers of their own, the decision as an edge sends it (a
refusal audited in PostgreSQL), waits on a run's state and draft, and reads of what was recorded.
Importing ``_decisions_sent_as_an_edge`` into a test module turns it on there (autouse)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import asyncpg
import pytest

from contracts import EventState, ReviewAck, ReviewDecision
from tests.conftest import Handle, fresh_key, wait_review
from tests.edge import send_decision
from tests.eventually import eventually
from tollgate.dev.standins import StandIns


def new_customer(standins: StandIns, tenant: str = "acme", first_name: str = "Lan") -> str:
    customer = fresh_key("C")
    standins.crm.upsert(tenant, customer, first_name=first_name, pet_name="Miu",
                        consent_messaging=True)
    return customer


def sent_to(standins: StandIns, customer: str) -> int:
    return sum(1 for m in standins.messaging.messages() if m.get("recipient_ref") == customer)


async def decide(handle: Handle, ticket: dict[str, Any], decision: str = "approve",
                 **overrides: Any) -> ReviewAck:
    fields: dict[str, Any] = dict(
        request_id=ticket["request_id"], decision=decision, reviewer="an.tran",
        role="care_lead", reason="checked against the record",
        draft_version=ticket["draft_version"])
    fields.update(overrides)
    return await send_decision(handle, ReviewDecision(**fields), database_url=_EDGE["dsn"])


#: Where ``decide`` audits a refusal, as the edge that sent it would (tests.edge).
_EDGE: dict[str, str] = {}


@pytest.fixture(autouse=True)
def _decisions_sent_as_an_edge(database_url: str) -> None:
    _EDGE["dsn"] = database_url


async def approve(handle: Handle, reason: str = "ok") -> None:
    """The open review approved by an.tran (care_lead), straight through the update."""
    ticket = await wait_review(handle)
    ack = await handle.execute_update("review", ReviewDecision(
        request_id=ticket["request_id"], decision="approve", reviewer="an.tran",
        role="care_lead", reason=reason, draft_version=ticket["draft_version"]))
    assert ack["accepted"]


async def wait_state(handle: Handle, state: EventState) -> None:
    await eventually(lambda: handle.query("state"), f"{handle.id} reaching {state}",
                     until=lambda seen: seen == state, timeout=20)


async def wait_draft(handle: Handle, version: int) -> dict[str, Any]:
    ticket: dict[str, Any] = await eventually(
        lambda: wait_review(handle), f"draft v{version} of {handle.id} in review",
        until=lambda t: t["draft_version"] == version, timeout=20)
    return ticket


async def fetch(database_url: str, sql: str, *args: Any) -> list[asyncpg.Record]:
    conn = await asyncpg.connect(database_url)
    try:
        return await conn.fetch(sql, *args)
    finally:
        await conn.close()


async def refusals(database_url: str, workflow_id: str) -> list[str]:
    rows = await fetch(database_url, "SELECT refusal_code FROM review_decisions"
                       " WHERE workflow_id = $1 AND NOT accepted ORDER BY id", workflow_id)
    return [r["refusal_code"] for r in rows]


async def seed_overdue_reviews(database_url: str, tenant: str, count: int) -> list[str]:
    ids = [f"event/{tenant}/{fresh_key('seed')}" for _ in range(count)]
    conn = await asyncpg.connect(database_url)
    try:
        await conn.executemany(
            "INSERT INTO events (workflow_id, run_id, tenant_id, idempotency_key, event_id,"
            " event_type, schema_version, entity_id, correlation_id, payload_fingerprint,"
            " occurred_at, received_at, state, last_seq, review_due_at)"
            " VALUES ($1, 'seed', $2, $1, $1, 'CARE_DUE', 3, 'C-seed', $1, 'x', now(), now(),"
            " 'AWAITING_REVIEW', 4, $3)",
            [(wf, tenant, datetime(2000, 1, 1, tzinfo=UTC)) for wf in ids])
    finally:
        await conn.close()
    return ids
