"""A reviewer sees evidence, not field names: each cited fact with its value and origin, the
rule and who gets the review next, and after request-info a version that answers, with the
word diff. Through the workflow's ticket and `tollgate review show` on a real worker."""

from __future__ import annotations

from typing import Any

import pytest
from temporalio.client import Client

from contracts import EventState, ReviewAck, ReviewDecision
from tests.conftest import Handle, signed_event, start, wait_review
from tests.eventually import eventually
from tests.workflows.review_helpers import new_customer
from tollgate.cli.review_show import review_show
from tollgate.config.settings import Settings
from tollgate.dev.standins import StandIns


async def decide(handle: Handle, ticket: dict[str, Any], decision: str, reason: str
                 ) -> ReviewAck:
    return await handle.execute_update("review", ReviewDecision(
        request_id=ticket["request_id"], decision=decision, reviewer="an.tran",
        role="care_lead", reason=reason, draft_version=ticket["draft_version"]),
        result_type=ReviewAck)


async def test_review_shows_values_origin_route_and_the_answering_version(
    worker_client: tuple[Client, str], standins: StandIns, database_url: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    client, queue = worker_client
    customer = new_customer(standins)
    handle = await start(client, queue, signed_event(customer))
    first = await wait_review(handle)

    facts = {e["ref"]: e for e in first["evidence"]}
    assert facts["crm.first_name"]["value"] == "Lan"
    assert facts["crm.pet_name"]["origin"] == "CRM customer record"
    assert facts["crm.first_name"]["fetched_at"] and facts["crm.first_name"]["freshness"]
    assert facts["event.due_at"]["origin"].startswith("event from ")
    route = first["route"]
    assert route["fallback_owner"] == "care-ops-oncall" and route["approver_roles"]
    assert route["sends_left_today"] == route["daily_limit"]  # nothing sent to them yet

    capsys.readouterr()
    settings = Settings.from_env({"DATABASE_URL": database_url})
    assert await review_show(client, settings, handle.id) == 0
    out = capsys.readouterr().out
    assert "crm.first_name = 'Lan'" in out and "CRM customer record" in out
    assert "next: care-ops-oncall at the SLA" in out

    assert (await decide(handle, first, "request_info", "When is it due?")).accepted
    second = await eventually(lambda: wait_review(handle), "draft v2 in review",
                              until=lambda t: t["draft_version"] == 2, timeout=20)
    assert second["previous_version"] == 1 and second["answering"] == "When is it due?"
    assert second["draft"]["message"] != first["draft"]["message"]
    assert second["previous_message"] == first["draft"]["message"]
    capsys.readouterr()
    assert await review_show(client, settings, handle.id) == 0
    out = capsys.readouterr().out
    assert "you asked: 'When is it due?'" in out and "changes from v1: " in out
    assert "{+The date is " in out

    assert (await decide(handle, second, "approve", "answers it")).accepted
    assert (await handle.result()).state == EventState.SUCCEEDED
    # Finished: the rule that routed it stays, nobody is "next" at an SLA any more.
    capsys.readouterr()
    assert await review_show(client, settings, handle.id) == 0
    out = capsys.readouterr().out
    assert "state SUCCEEDED" in out and "rule messaging.send_message" in out, out
    assert "next: " not in out and "at the SLA" not in out, out
    assert sum(m.get("recipient_ref") == customer for m in standins.messaging.messages()) == 1


async def test_flags_with_rule_source_and_span_are_kept_after_the_event_ends(
    worker_client: tuple[Client, str], standins: StandIns, database_url: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from adapters.postgres.pool import create_pool
    from adapters.postgres.store import PostgresStore
    from tests.workflows.untrusted_context_support import INJECTION, put_customer
    from tollgate.cli.review_evidence import print_flags

    client, queue = worker_client
    customer = put_customer(standins, notes=f"Friendly owner. {INJECTION}")
    handle = await start(client, queue, signed_event(customer))
    ticket = await wait_review(handle)
    assert ticket["flags"]
    assert (await decide(handle, ticket, "reject", "injected note")).accepted
    assert (await handle.result()).state == EventState.REJECTED

    pool = await create_pool(database_url)
    try:
        record = await PostgresStore(pool).review_record(handle.id)
    finally:
        await pool.close()
    assert record is not None and record.draft is not None
    kept = record.draft["flags"]
    assert {(f["rule"], f["source"]) for f in kept} >= {("role_marker", "crm.notes")}
    assert any(f["span"].startswith("HỆ THỐNG") for f in kept)
    capsys.readouterr()
    print_flags(None, record.draft)  # what `review show` prints once no query answers
    shown = capsys.readouterr().out
    assert "FLAGGED" in shown and "rule role_marker · from crm.notes: 'HỆ THỐNG" in shown
