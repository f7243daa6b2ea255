"""Per-target task queues (issue 13, item 5): the send runs on ``<main queue>-target-<adapter>``,
whose worker carries the target's rate limit, so the Temporal server spaces the sends across
every worker process. The spacing is read from the stand-in target's own clock (the time each
message was stored), never from how long the test took."""

from __future__ import annotations

import asyncio
import uuid
from datetime import datetime
from pathlib import Path

from temporalio.client import Client
from temporalio.runtime import Runtime, TelemetryConfig
from temporalio.testing import WorkflowEnvironment

from contracts import EventState, ReviewDecision, target_task_queue
from tests.conftest import (
    CONVERTER,
    Handle,
    fresh_key,
    signed_event,
    start,
    wait_review,
    worker_settings,
)
from tollgate.dev.standins import StandIns
from tollgate.runtime.workers import draft_worker, main_worker
from workflows.process_event import DRAFT_TASK_QUEUE

#: The dev server's default partitions per task queue (matching.numTaskqueueReadPartitions).
PARTITIONS = 4


async def approve(handle: Handle) -> None:
    ticket = await wait_review(handle)
    ack = await handle.execute_update("review", ReviewDecision(
        request_id=ticket["request_id"], decision="approve", reviewer="lan.nguyen",
        role="care_lead", reason="ok", draft_version=ticket["draft_version"]))
    assert ack["accepted"] is True


def new_customer(standins: StandIns) -> str:
    """A consenting customer of its own, so no event supersedes or daily-limits another."""
    customer = fresh_key("Q")
    standins.crm.upsert("acme", customer, first_name="Lan", pet_name="Miu",
                        consent_messaging=True)
    return customer


async def test_the_send_is_scheduled_on_its_targets_queue(
    worker_client: tuple[Client, str], standins: StandIns
) -> None:
    client, queue = worker_client
    handle = await start(client, queue, signed_event(new_customer(standins)))
    await approve(handle)
    assert (await handle.result()).state == EventState.SUCCEEDED
    scheduled = {
        e.activity_task_scheduled_event_attributes.activity_type.name:
            e.activity_task_scheduled_event_attributes.task_queue.name
        async for e in handle.fetch_history_events()
        if e.HasField("activity_task_scheduled_event_attributes")}
    assert scheduled["execute_action"] == target_task_queue(queue, "messaging")
    # Everything else stays where it was: the context read on the main queue, the draft on the
    # model's, and no other normal activity.
    assert set(scheduled) == {"load_context", "execute_action", "draft_message"}
    assert scheduled["load_context"] == queue
    assert scheduled["draft_message"] == DRAFT_TASK_QUEUE


async def test_a_rate_limit_spaces_a_burst_of_sends_across_workers(
    dev_server: WorkflowEnvironment, database_url: str, standins: StandIns, tmp_path: Path
) -> None:
    client, queue, rate, n = dev_server.client, f"tq-{uuid.uuid4().hex[:8]}", 2.0, 12
    settings = worker_settings(database_url, standins, tmp_path, queue,
                               TOLLGATE_TARGET_RATES=f"messaging={rate:g}")
    # Two main workers with runtimes of their own, as two processes have: the limit is the
    # queue's, not a worker's.
    other = await Client.connect(client.service_client.config.target_host,
                                 namespace=client.namespace, data_converter=CONVERTER,
                                 runtime=Runtime(telemetry=TelemetryConfig()))
    async with main_worker(client, settings), main_worker(other, settings), \
            draft_worker(client, settings):
        handles = [await start(client, queue, signed_event(new_customer(standins)))
                   for _ in range(n)]
        # Every event waits for review first, so the approvals release the sends as one burst.
        await asyncio.gather(*(wait_review(h) for h in handles))
        await asyncio.gather(*(approve(h) for h in handles))
        outcomes = await asyncio.gather(*(h.result() for h in handles))
    assert {o.state for o in outcomes} == {EventState.SUCCEEDED}
    keys = {o.receipt.action_key for o in outcomes if o.receipt}
    sent = sorted(datetime.fromisoformat(m["created_at"]) for m in standins.messaging.messages()
                  if m["idempotency_key"] in keys)
    assert len(sent) == n
    span = (sent[-1] - sent[0]).total_seconds()
    # The dev server splits a task queue into 4 partitions, each with its share of the limit:
    # up to 4 sends may go at once, the rest follow at `rate` per second in all (4 s for these
    # twelve). Unlimited, they land within a fraction of a second (they all wait on one
    # approval burst). The times are the target's, which the server's dispatch precedes: on a
    # loaded machine an early send's own HTTP call can land a second late, which shortens the
    # span without any limit being broken (seen with eight sends: 1.72 s, and 0.98 s in a full
    # run where the limit allowed no less than 2 s), hence half the limit's span.
    assert span >= (n - PARTITIONS) / rate * 0.5, f"{n} sends within {span:.2f} s at {rate:g}/s"
