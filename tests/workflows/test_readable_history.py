"""What an operator reads in the Web UI's summary column and timeline: each run says what it is
(event type, tenant) and where it stands, and never carries customer data (issue 10, item 4)."""

from __future__ import annotations

from temporalio.api.enums.v1 import EventType
from temporalio.api.sdk.v1 import WorkflowMetadata
from temporalio.client import Client

from tests.conftest import signed_event, wait_review
from tollgate.intake.submit import submit


async def test_a_run_is_summarised_by_type_tenant_and_state_without_customer_data(
    worker_client: tuple[Client, str]
) -> None:
    client, queue = worker_client
    ack = await submit(client, signed_event("C-1001"), task_queue=queue)
    assert ack.status == "accepted"
    handle = client.get_workflow_handle(ack.workflow_id)
    await wait_review(handle)

    described = await handle.describe()
    assert await described.static_summary() == "CARE_DUE for tenant acme"
    meta = await handle.query("__temporal_workflow_metadata", result_type=WorkflowMetadata)
    assert meta.current_details == "state AWAITING_REVIEW"

    summaries = []
    async for event in handle.fetch_history_events():
        # A local activity's summary is on its marker (the context read, ADR 0053).
        if event.event_type in (EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
                                EventType.EVENT_TYPE_MARKER_RECORDED):
            summary = event.user_metadata.summary
            if summary.data:
                summaries.append(await client.data_converter.decode([summary]))
    texts = [str(s[0]) for s in summaries]
    assert any("customer record" in t for t in texts)
    assert any("draft version 1" in t for t in texts)
    # The customer's name and pet are in the draft, never in what the run is labelled with.
    for text in [*texts, meta.current_details, await described.static_summary() or ""]:
        assert "Lan" not in text and "Miu" not in text
