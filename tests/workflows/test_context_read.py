"""The customer record read as a local activity (one-marker shape, ADR 0053): a CRM outage is
retried on workflow timers, so the producer's acknowledgement, which goes out with the workflow
task, is not held while the CRM is down, and the event still goes on once it answers."""

from __future__ import annotations

import json
import uuid

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from contracts import EventState, FinalOutcome
from tests.conftest import signed_event, wait_review
from tollgate.dev.standins import StandIns
from tollgate.intake.submit import submit


async def test_a_crm_outage_does_not_hold_the_acknowledgement(
    worker_client: tuple[Client, str], standins: StandIns
) -> None:
    client, queue = worker_client
    customer = f"C-{uuid.uuid4().hex[:8]}"
    standins.crm.upsert("acme", customer, first_name="Lan", pet_name="Miu",
                        consent_messaging=True)
    standins.crm.inject("unavailable", key=customer, times=2)
    ack = await submit(client, signed_event(customer), task_queue=queue)
    assert ack.status == "accepted"
    handle = client.get_workflow_handle(ack.workflow_id, result_type=FinalOutcome)
    assert (await wait_review(handle))["state"] == EventState.AWAITING_REVIEW

    kinds, reads = [], []
    async for event in handle.fetch_history_events():
        kinds.append(event.event_type)
        marker = event.marker_recorded_event_attributes
        if event.event_type == EventType.EVENT_TYPE_MARKER_RECORDED and "data" in marker.details:
            data = json.loads(marker.details["data"].payloads[0].data)
            if data["activity_type"] == "load_context":
                reads.append((data["attempt"], marker.HasField("failure")))
    # Two failed reads, each waited out on a timer, then the third answered.
    assert reads == [(1, True), (2, True), (3, False)]
    assert kinds.count(EventType.EVENT_TYPE_TIMER_STARTED) == 3  # two retries, the review SLA
    # The producer was answered before the first retry's timer, not after the outage.
    assert (kinds.index(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED)
            < kinds.index(EventType.EVENT_TYPE_TIMER_STARTED))
