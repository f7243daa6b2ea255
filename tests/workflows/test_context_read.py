"""The customer record is read by a regular activity, after the producer has its answer: a CRM
that fails or hangs never holds the intake acknowledgement (ADR 0053 tried it as a local
activity, whose workflow task, and with it the acknowledgement, waited for the read)."""

from __future__ import annotations

from datetime import timedelta

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from contracts import EventState, FinalOutcome
from tests.conftest import fresh_key, signed_event, wait_review
from tollgate.dev.standins import StandIns
from tollgate.intake.submit import submit


async def test_a_crm_outage_does_not_hold_the_acknowledgement(
    env: WorkflowEnvironment, worker_client: tuple[Client, str], standins: StandIns
) -> None:
    client, queue = worker_client
    customer = fresh_key("C")
    standins.crm.upsert("acme", customer, first_name="Lan", pet_name="Miu",
                        consent_messaging=True)
    # Four failures: the read's retries wait 0.5 + 1 + 2 + 4 s before it can answer.
    standins.crm.inject("unavailable", key=customer, times=4)
    ack = await submit(client, signed_event(customer), task_queue=queue)
    assert ack.status == "accepted"
    handle = client.get_workflow_handle(ack.workflow_id, result_type=FinalOutcome)
    # Answered while the read was still failing: nothing in the history has read the record.
    answered = [event.event_type async for event in handle.fetch_history_events()]
    assert EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED in answered
    assert EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED not in answered

    await env.sleep(timedelta(seconds=8))  # the read's backoff, skipped rather than waited
    assert (await wait_review(handle))["state"] == EventState.AWAITING_REVIEW
    attempts = [event.activity_task_started_event_attributes.attempt
                async for event in handle.fetch_history_events()
                if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED]
    assert attempts[0] == 5  # the context read: four failed attempts, the fifth answered
