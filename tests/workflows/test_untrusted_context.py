"""Issue 17 end to end: an injection typed into a CRM field reaches the reviewer as a flag with
its span, never as an approval; the context step reads only the fields the policy names.

Real dev server, worker, PostgreSQL and stand-ins; the record is written through the CRM
stand-in's HTTP API, as a CRM user's edit would arrive.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from contracts import EventState, ReviewAck, ReviewDecision
from tests.conftest import signed_event, start, wait_review, worker_settings
from tests.eventually import eventually
from tests.workflows.untrusted_context_support import INJECTION, put_customer
from tollgate.cli.review_list import review_list
from tollgate.cli.review_show import review_show
from tollgate.dev.standins import StandIns
from tollgate.runtime.workers import draft_worker, main_worker


async def test_injection_in_a_crm_note_reaches_the_reviewer_flagged_with_its_span(
    dev_server: WorkflowEnvironment, standins: StandIns, database_url: str, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    client, queue = dev_server.client, f"tq-{uuid.uuid4().hex[:8]}"
    customer = put_customer(standins, notes=f"Friendly owner. {INJECTION}",
                            phone="0912 345 678", email="lan.tran@example.com")
    settings = worker_settings(database_url, standins, tmp_path, queue)
    async with main_worker(client, settings), draft_worker(client, settings):
        handle = await start(client, queue, signed_event(customer))
        ticket = await wait_review(handle)

        # The flag names its rule, the field it came from and the text as the customer typed it.
        notes = [f for f in ticket["flags"] if f["source"] == "crm.notes"]
        assert {f["rule"] for f in notes} >= {"role_marker", "approval"}
        assert any(f["span"].startswith("HỆ THỐNG") for f in notes)
        # Minimisation: the policy names the notes, not the phone or e-mail, so neither was read.
        assert "0912" not in ticket["draft"]["message"]
        assert set(ticket["draft"]["source_refs"]) <= {
            "crm.first_name", "crm.pet_name", "crm.locale", "event.reminder_kind",
            "event.due_at"}

        capsys.readouterr()
        assert await review_show(client, settings, handle.id) == 0
        shown = capsys.readouterr().out
        assert "FLAGGED" in shown and "from crm.notes" in shown and "HỆ THỐNG" in shown

        async def review_listing() -> str:
            assert await review_list(client, tenant="acme") == 0
            return capsys.readouterr().out

        # Visibility follows the upsert shortly after.
        listed = await eventually(review_listing, f"{handle.id} in the review list",
                                  until=lambda o: handle.id in o, timeout=15, interval=0.1)
        line = next(x for x in listed.splitlines() if x.startswith(handle.id))
        assert f"! {len(ticket['flags'])}" in line

        # The flag approved nothing: the event still waits for a person, and nothing was sent.
        assert await handle.query("state") == EventState.AWAITING_REVIEW
        assert not [m for m in standins.messaging.messages()
                    if m.get("recipient_ref") == customer]
        ack = await handle.execute_update("review", ReviewDecision(
            request_id=ticket["request_id"], decision="reject", reviewer="an.tran",
            role="care_lead", reason="injected note", draft_version=ticket["draft_version"]),
            result_type=ReviewAck)
        assert ack.accepted
        assert (await handle.result()).state == EventState.REJECTED
