"""The helpdesk target (issue 32): the adapter over real loopback HTTP against the helpdesk
stand-in. One assignment per key, found by key after a write whose answer was lost, and what
goes out is the approved assignment and nothing else."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from adapters.http.helpdesk import HelpdeskHttpAdapter
from contracts import ActionRequest, EventRef
from contracts.errors import RateLimited, RejectedError, UnknownWrite
from contracts.triage import TICKET_CHANNEL, Assignment
from tollgate.dev.standins import HelpdeskStandIn

REF = EventRef(workflow_id="event/acme/m-1", tenant_id="acme", event_id="evt-m-1",
               event_type="MESSAGE_RECEIVED", entity_id="C-1001", correlation_id="corr-m-1",
               schema_version=1)
ASSIGNMENT = Assignment(ticket_ref="T-881", queue="billing", intent="refund_request",
                        reply="Hi Lan, our billing team will look into it.")


def action(key: str = "acme:evt-m-1:helpdesk:assign_ticket", body: str | None = None
           ) -> ActionRequest:
    return ActionRequest(ref=REF, adapter="helpdesk", action="assign_ticket", action_key=key,
                         channel=TICKET_CHANNEL, body=body or ASSIGNMENT.body(),
                         policy_version="2026-12-02.1", approved_by="an.tran")


@pytest.fixture
def helpdesk() -> Iterator[HelpdeskStandIn]:
    standin = HelpdeskStandIn().start()
    try:
        yield standin
    finally:
        standin.stop()


async def test_the_approved_assignment_is_stored_once_and_found_by_key(
        helpdesk: HelpdeskStandIn) -> None:
    adapter = HelpdeskHttpAdapter(helpdesk.url)
    try:
        first = await adapter.execute(action())
        again = await adapter.execute(action())
        found = await adapter.lookup(action().action_key)
    finally:
        await adapter.aclose()
    assert first.external_id == again.external_id == (found and found.external_id)
    [stored] = helpdesk.for_ticket("T-881")
    assert (stored["queue"], stored["intent"], stored["reply"]) == (
        "billing", "refund_request", ASSIGNMENT.reply)
    assert stored["customer_ref"] == "C-1001" and stored["tenant_id"] == "acme"
    assert helpdesk.message_count == 1


async def test_an_answer_lost_after_the_write_is_unknown_and_the_lookup_finds_it(
        helpdesk: HelpdeskStandIn) -> None:
    helpdesk.inject("fail_after_write")
    adapter = HelpdeskHttpAdapter(helpdesk.url)
    try:
        with pytest.raises(UnknownWrite) as raised:
            await adapter.execute(action())
        found = await adapter.lookup(action().action_key)
    finally:
        await adapter.aclose()
    assert raised.value.code == "helpdesk_504"
    assert found is not None and helpdesk.message_count == 1


async def test_a_429_is_rate_limited_and_assigns_nothing(helpdesk: HelpdeskStandIn) -> None:
    helpdesk.inject("rate_limit", retry_after=3)
    adapter = HelpdeskHttpAdapter(helpdesk.url)
    try:
        with pytest.raises(RateLimited) as raised:
            await adapter.execute(action())
    finally:
        await adapter.aclose()
    assert raised.value.retry_after == 3.0 and helpdesk.message_count == 0


async def test_a_body_that_is_no_assignment_is_refused_before_any_call(
        helpdesk: HelpdeskStandIn) -> None:
    adapter = HelpdeskHttpAdapter(helpdesk.url)
    try:
        with pytest.raises(RejectedError) as raised:
            await adapter.execute(action(body="Hi Lan, a plain message"))
    finally:
        await adapter.aclose()
    assert raised.value.code == "helpdesk_bad_assignment"
    assert helpdesk.post_attempts == 0
