"""What an operator's filter sees: the search attribute ``TollgateState`` changes only at the
states an operator or reviewer filters on (patch ``coalesced-search-attributes``; no VALIDATED
in a one-marker-shape run, ADR 0053; EXECUTING only for a send that outlasts its delay, ADR 0056),
each change one upsert carrying every attribute due at that point, and a decided record leaves
the reviewer's list with that upsert."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.converter import default
from temporalio.testing import WorkflowEnvironment

from adapters.postgres.ops import OpsStore
from contracts import EventState, FinalOutcome, ReviewDecision
from contracts.actions import WakeUp
from contracts.search_attributes import parse_review_ticket
from tests.conftest import Handle, fresh_key, signed_event, start, wait_review
from tests.eventually import eventually
from tests.workflows.soak_support import ops
from tollgate.dev.standins import StandIns
from tollgate.intake.submit import submit
from workflows.search_attributes import EVENT_TYPE, REVIEW_DUE, REVIEW_TICKET, STATE, TENANT
from workflows.timeouts import EXECUTING_SHOWN_AFTER

__all__ = ["ops"]  # the kill-switch fixture (reopens the switch at the end)


def new_customer(standins: StandIns) -> str:
    customer = fresh_key("C")
    standins.crm.upsert("acme", customer, first_name="Lan", pet_name="Miu",
                        consent_messaging=True)
    return customer


async def upserts(handle: Handle) -> list[dict[str, Any]]:
    """Each upsert of Tollgate's attributes in the history, as the attributes it set (names to
    decoded values); the SDK's own ``TemporalChangeVersion`` upsert per patch left out."""
    history = await handle.fetch_history()
    found = []
    for event in history.events:
        if event.event_type == EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
            fields = event.upsert_workflow_search_attributes_event_attributes
            found.append({name: default().payload_converter.from_payload(payload)
                          for name, payload in fields.search_attributes.indexed_fields.items()})
    return [u for u in found if "TemporalChangeVersion" not in u]


async def patch_markers(handle: Handle) -> list[str]:
    """The patch ids the run's history recorded markers for, in order."""
    history = await handle.fetch_history()
    return [json.loads(payload.data)["id"] for event in history.events
            if event.event_type == EventType.EVENT_TYPE_MARKER_RECORDED
            for payload in event.marker_recorded_event_attributes.details["patch-data"].payloads
            if "patch-data" in event.marker_recorded_event_attributes.details]


async def decide(handle: Handle, ticket: dict[str, Any], decision: str) -> None:
    await handle.execute_update("review", ReviewDecision(
        request_id=ticket["request_id"], decision=decision, reviewer="an.tran",
        role="care_lead", reason="checked", draft_version=ticket["draft_version"]))


async def test_an_approved_event_shows_its_queue_and_its_outcome_in_two_upserts(
    worker_client: tuple[Client, str], standins: StandIns
) -> None:
    client, queue = worker_client
    handle = await start(client, queue, signed_event(new_customer(standins)))
    ticket = await wait_review(handle)
    waiting = (await handle.describe()).typed_search_attributes
    assert waiting.get(STATE) == "AWAITING_REVIEW"
    assert waiting.get(TENANT) == "acme"
    assert waiting.get(REVIEW_DUE) is not None
    # The ticket a decision names is listed with the queue: no query needed to decide.
    assert parse_review_ticket(waiting.get(REVIEW_TICKET)) == (
        ticket["request_id"], ticket["draft_version"])

    await decide(handle, ticket, "approve")
    assert (await handle.result()).state == EventState.SUCCEEDED
    done = await upserts(handle)
    # A send that ends within EXECUTING_SHOWN_AFTER shows its outcome directly (ADR 0056).
    assert [u.get("TollgateState") for u in done] == ["AWAITING_REVIEW", "SUCCEEDED"]
    # Started without them (a bare start), tenant and type come with the first state shown.
    assert set(done[0]) == {"TollgateState", "TollgateTenant", "TollgateEventType",
                            "TollgateReviewDue", "TollgateReviewTicket"}
    # Leaving the queue unsets the ticket in the same upsert: a decided review never lists.
    assert set(done[1]) == {"TollgateState", "TollgateReviewTicket"}
    final = (await handle.describe()).typed_search_attributes
    assert final.get(STATE) == "SUCCEEDED"
    assert final.get(REVIEW_TICKET) is None
    # The run's input says its shape: no patch marker, so no TemporalChangeVersion upsert.
    assert await patch_markers(handle) == []
    history = await handle.fetch_history()
    assert sum(e.event_type == EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES
               for e in history.events) == 2


async def test_a_run_started_before_the_quiet_shape_keeps_one_marker_and_shows_executing(
    worker_client: tuple[Client, str], standins: StandIns
) -> None:
    """A start without ``shape`` (the code before ADR 0056) still takes the one-marker shape:
    its marker, and EXECUTING shown the moment the review is approved."""
    client, queue = worker_client
    handle = await start(client, queue, signed_event(new_customer(standins)), shape=None)
    await decide(handle, await wait_review(handle), "approve")
    assert (await handle.result()).state == EventState.SUCCEEDED
    done = await upserts(handle)
    assert [u.get("TollgateState") for u in done] == [
        "AWAITING_REVIEW", "EXECUTING", "SUCCEEDED"]
    assert set(done[1]) == {"TollgateState", "TollgateReviewTicket"}
    # One patch marker for the run's whole shape, not one per patch (ADR 0053).
    assert await patch_markers(handle) == ["one-marker-shape"]


async def test_asking_for_information_takes_the_record_off_the_reviewers_list(
    worker_client: tuple[Client, str], standins: StandIns
) -> None:
    client, queue = worker_client
    handle = await start(client, queue, signed_event(new_customer(standins)))
    await decide(handle, await wait_review(handle), "request_info")
    second = await wait_review(handle)
    assert second["draft_version"] == 2
    listed = (await handle.describe()).typed_search_attributes.get(REVIEW_TICKET)
    assert parse_review_ticket(listed) == (second["request_id"], 2)
    await decide(handle, second, "reject")
    assert (await handle.result()).state == EventState.REJECTED
    states = [u["TollgateState"] for u in await upserts(handle) if "TollgateState" in u]
    assert states == ["AWAITING_REVIEW", "CONTEXT_READY", "AWAITING_REVIEW", "REJECTED"]


async def test_a_submitted_event_is_listed_by_tenant_and_type_from_its_start(
    worker_client: tuple[Client, str], standins: StandIns
) -> None:
    client, queue = worker_client
    ack = await submit(client, signed_event(new_customer(standins)), task_queue=queue)
    handle = client.get_workflow_handle(ack.workflow_id, result_type=FinalOutcome)
    ticket = await wait_review(handle)
    waiting = (await handle.describe()).typed_search_attributes
    assert (waiting.get(TENANT), waiting.get(EVENT_TYPE)) == ("acme", "CARE_DUE")
    await decide(handle, ticket, "reject")
    assert (await handle.result()).state == EventState.REJECTED
    done = await upserts(handle)
    # Validation agreed with the start: the run never upserts them itself.
    assert [u.get("TollgateState") for u in done] == ["AWAITING_REVIEW", "REJECTED"]
    assert not any({"TollgateTenant", "TollgateEventType"} & set(u) for u in done)


async def test_a_claim_validation_refuses_is_not_left_listed(
    worker_client: tuple[Client, str], standins: StandIns
) -> None:
    """The start lists the producer's claim (patterns checked only); a forged event is
    quarantined, and its tenant and type leave the listing in the same upsert."""
    client, queue = worker_client
    event = json.loads(signed_event(new_customer(standins)))
    event["payload"]["customer_id"] = new_customer(standins)  # the signature no longer matches
    ack = await submit(client, json.dumps(event), task_queue=queue)
    assert ack.status == "invalid"
    handle = client.get_workflow_handle(ack.workflow_id, result_type=FinalOutcome)
    assert (await handle.result()).state == EventState.QUARANTINED
    final = (await handle.describe()).typed_search_attributes
    assert final.get(STATE) == "QUARANTINED"
    assert (final.get(TENANT), final.get(EVENT_TYPE)) == (None, None)


async def test_a_send_that_outlasts_its_delay_shows_executing_and_leaves_the_queue(
    env: WorkflowEnvironment, worker_client: tuple[Client, str], standins: StandIns,
    ops: OpsStore,
) -> None:
    """A quiet run shows EXECUTING only once its send has run ``EXECUTING_SHOWN_AFTER`` (here
    held by a closed kill switch), so an operator still finds it and it leaves the reviewers'
    list then; until then a second decision is refused, as for any closed review."""
    client, queue = worker_client
    await ops.set_switch(adapter="messaging", tenant_id="acme", closed=True,
                         reason="incident 42", actor="op.kim")
    handle = await start(client, queue, signed_event(new_customer(standins)))
    ticket = await wait_review(handle)
    await decide(handle, ticket, "approve")
    await eventually(lambda: handle.query("state"), "the approved send held",
                     until=lambda s: s == EventState.EXECUTING, timeout=20)
    listed = (await handle.describe()).typed_search_attributes
    assert listed.get(STATE) == "AWAITING_REVIEW"  # within the delay: still listed
    with pytest.raises(WorkflowUpdateFailedError) as refused:
        await decide(handle, ticket, "approve")
    assert "review_closed" in str(refused.value.cause)

    await env.sleep(EXECUTING_SHOWN_AFTER + timedelta(seconds=1))
    shown = await eventually(
        lambda: handle.describe(), "EXECUTING shown after the delay",
        until=lambda d: d.typed_search_attributes.get(STATE) == "EXECUTING", timeout=20)
    assert shown.typed_search_attributes.get(REVIEW_TICKET) is None

    await ops.set_switch(adapter="messaging", tenant_id="acme", closed=False,
                         reason="fixed", actor="op.kim")
    await handle.signal("wake", WakeUp(cause="kill_switch:messaging/acme"))
    assert (await handle.result()).state == EventState.SUCCEEDED
    # (the hold's own attribute comes and goes in upserts of its own: workflows/holds.py)
    assert [u["TollgateState"] for u in await upserts(handle) if "TollgateState" in u] == [
        "AWAITING_REVIEW", "EXECUTING", "SUCCEEDED"]
