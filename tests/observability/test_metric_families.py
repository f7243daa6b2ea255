"""Each issue-11 metric family, driven by the path that produces it and read back scraped from
the endpoints: Tollgate's ``/metrics`` (from PostgreSQL, so a fresh worker scrapes the same
figures) and the Temporal SDK's own. Real workers on the time-skipping server; what is a store
write in production (the HTTP intake's answer, the circuit, a replay's bookkeeping) goes
through its store. This module has its own database, so the figures are exact."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.testing import WorkflowEnvironment

from adapters.postgres.circuit import CircuitStore
from adapters.postgres.ops import OpsStore
from adapters.postgres.outbox import OutboxStore
from contracts import EventState, IntakeAck, IntakeRequest, ReviewDecision
from contracts.events import DUPLICATE_REFUSAL
from tests.conftest import (
    TEST_KEYS,
    Handle,
    fresh_key,
    signed_event,
    start,
    wait_review,
    worker_settings,
)
from tests.faults.conftest import send_key
from tests.faults.kill_switch_support import approved
from tests.observability.dashboard_support import dashboard_names
from tests.ports import free_port
from tests.stored_requests import stored_request
from tollgate.config.settings import Settings
from tollgate.dev.standins import StandIns
from tollgate.observability.sdk_runtime import sdk_runtime
from tollgate.ops.actions import replay_dead_letter
from tollgate.runtime.client import build_client
from tollgate.runtime.workers import draft_worker, main_worker

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


async def scrape(port: int) -> tuple[Samples, str]:
    async with httpx.AsyncClient() as http:
        response = await http.get(f"http://127.0.0.1:{port}/metrics")
    assert response.status_code == 200
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(response.text)
            for s in family.samples}, response.text


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


@asynccontextmanager
async def workers(client: Client, settings: Settings) -> AsyncIterator[None]:
    async with main_worker(client, settings), draft_worker(client, settings):
        yield


def customer(standins: StandIns, **contact: str) -> str:
    customer_id = fresh_key("C")
    standins.crm.upsert("acme", customer_id, first_name="Lan", pet_name="Miu",
                        consent_messaging=True, **contact)
    return customer_id


async def test_every_family_moves_on_its_path_and_survives_a_restart(
    env: WorkflowEnvironment, standins: StandIns, database_url: str, tmp_path: Path
) -> None:
    port, sdk_port = free_port(), free_port()
    queue = f"tq-families-{uuid.uuid4().hex[:8]}"
    settings = worker_settings(database_url, standins, tmp_path, queue,
                               TOLLGATE_METRICS_PORT=str(port),
                               TOLLGATE_SDK_METRICS_PORT=str(sdk_port))
    # The worker polls through a client on the SDK-metrics runtime, as worker.py builds it;
    # the test drives workflows through the environment's client (it skips time).
    runtime = sdk_runtime(settings.observability)
    assert runtime is not None
    sdk_client = await build_client(env.client.service_client.config.target_host,
                                    keys=TEST_KEYS, env={}, runtime=runtime)
    client = env.client
    standins.messaging.clear_faults()
    pool = await asyncpg.create_pool(database_url, min_size=1, max_size=2)
    try:
        async with workers(sdk_client, settings):
            before, _ = await scrape(port)
            # Sent after review; its key delivered again by another run while it waited
            # (in flight) and after it closed: the worker's gate answers both "duplicate".
            key = fresh_key("m")
            raw = signed_event(customer(standins), key=key)
            first = await start(client, queue, raw)
            ticket = await wait_review(first)
            assert (await (await start(client, queue, raw)).result()).state == \
                EventState.DUPLICATE
            first = await approved_from(first, ticket)
            assert (await first.result()).state == EventState.SUCCEEDED
            assert (await (await start(client, queue, raw)).result()).state == \
                EventState.DUPLICATE
            # The same key with another payload: quarantined as a conflict.
            other = signed_event(customer(standins), key=key)
            assert (await (await start(client, queue, other)).result()).state == \
                EventState.QUARANTINED
            # A write the target stored but answered 504 to: unknown, then found by lookup.
            unknown_key = fresh_key("u")
            standins.messaging.inject("fail_after_write", key=send_key(unknown_key))
            handle = await approved(client, queue,
                                    signed_event(customer(standins), key=unknown_key))
            assert (await handle.result()).state == EventState.SUCCEEDED
            # A credential in the CRM notes: the validator refuses the draft.
            poisoned = await start(client, queue, signed_event(
                customer(standins, notes="password: hunter2")))
            assert (await poisoned.result()).state == EventState.FAILED_VALIDATION
            # One left waiting for its reviewer, delivered twice more meanwhile through the
            # intake update (what update-with-start sends to a running workflow).
            raw = signed_event(customer(standins))
            waiting = await start(client, queue, raw)
            await wait_review(waiting)
            acks = [await waiting.execute_update(
                "intake", IntakeRequest(raw=raw, received_at=datetime.now(UTC)),
                result_type=IntakeAck) for _ in range(2)]
            assert [a.status for a in acks] == ["accepted", "duplicate"]
            # From the second repeat on the update's validator refuses it before history (the
            # producer's submit() answers it "duplicate"): refused, so not counted again.
            with pytest.raises(WorkflowUpdateFailedError) as refused:
                await waiting.execute_update(
                    "intake", IntakeRequest(raw=raw, received_at=datetime.now(UTC)),
                    result_type=IntakeAck)
            assert getattr(refused.value.cause, "type", None) == DUPLICATE_REFUSAL
            await store_paths(pool, standins, queue, unknown_key)
            after, text = await scrape(port)
            sdk, _ = await scrape(sdk_port)
        async with workers(client, settings):  # a fresh worker, no SDK runtime this time
            restarted, _ = await scrape(port)
    finally:
        await pool.close()

    counted = [("tollgate_duplicates_prevented_total",
                {"tenant_id": "acme", "channel": "gate", "stage": "in_flight"}, 1),
               ("tollgate_duplicates_prevented_total",
                {"tenant_id": "acme", "channel": "gate", "stage": "after_close"}, 1),
               ("tollgate_duplicates_prevented_total",
                {"tenant_id": "acme", "channel": "http", "stage": "in_flight"}, 2),
               ("tollgate_duplicates_prevented_total",
                {"tenant_id": "acme", "channel": "update", "stage": "in_flight"}, 1),
               ("tollgate_idempotency_conflicts_total", {"tenant_id": "acme"}, 1),
               ("tollgate_validation_failures_total",
                {"tenant_id": "acme", "reason": "secret_in_context"}, 1),
               ("tollgate_review_latency_seconds_count", {"tenant_id": "acme"}, 2),
               ("tollgate_review_latency_seconds_bucket", {"tenant_id": "acme", "le": "60.0"}, 2),
               ("tollgate_reviews_waiting", {"tenant_id": "acme"}, 1),
               ("tollgate_unknown_writes_opened_total",
                {"tenant_id": "acme", "adapter": "messaging"}, 1),
               ("tollgate_unknown_writes_settled_total",
                {"tenant_id": "acme", "adapter": "messaging", "outcome": "SUCCEEDED"}, 1),
               ("tollgate_unknown_write_recover_seconds_count",
                {"tenant_id": "acme", "adapter": "messaging"}, 1),
               ("tollgate_dlq_replays_total", {"tenant_id": "acme", "result": "started"}, 1),
               ("tollgate_dlq_replays_total", {"tenant_id": "acme", "result": "succeeded"}, 1),
               ("tollgate_dlq_replays_total",
                {"tenant_id": "acme", "result": "already_done"}, 1),
               ("tollgate_circuit_closures_total",
                {"adapter": "messaging", "tenant_id": "globex", "rule": "duplicates"}, 1),
               ("tollgate_kill_switch_closed", {"adapter": "messaging", "tenant_id": "globex"},
                1),
               ("tollgate_receipts",
                {"tenant_id": "acme", "adapter": "messaging", "status": "SUCCEEDED"}, 2)]
    for name, labels, expected in counted:
        assert value(before, name, **labels) == 0, name
        assert value(after, name, **labels) == expected, (name, labels)
        assert value(restarted, name, **labels) == expected, (name, labels)
    assert value(after, "tollgate_review_latency_seconds_sum", tenant_id="acme") > 0
    # Labels are ids and codes: no customer id, key, name or pet on the page.
    assert not any(v.startswith("C-") or key in v for (_, pairs) in after for _, v in pairs)
    assert "Lan" not in text and "Miu" not in text
    # The SDK's own metrics, and every one the dashboard charts among them.
    sdk_names = {name for name, _ in sdk}
    assert value(sdk, "temporal_workflow_task_schedule_to_start_latency_seconds_count",
                 namespace="default", service_name="temporal-core-sdk", task_queue=queue) >= 5
    assert "temporal_workflow_task_schedule_to_start_latency_seconds_bucket" in sdk_names
    assert dashboard_names("temporal_") - sdk_names == set()


async def approved_from(handle: Handle, ticket: dict[str, Any]) -> Handle:
    """Approve the review ``ticket`` of ``handle`` (the duplicate ran while it waited)."""
    await handle.execute_update("review", ReviewDecision(
        request_id=ticket["request_id"], decision="approve", reviewer="an.tran",
        role="care_lead", reason="ok", draft_version=ticket["draft_version"]))
    return handle


async def store_paths(pool: asyncpg.Pool, standins: StandIns, queue: str,
                      done_key: str) -> None:
    """What production writes through stores: the HTTP intake answering a key twice more while
    its first delivery waits in the outbox, the circuit tripping, and dead-letter replays."""
    outbox = OutboxStore(pool)
    wf = f"event/acme/{fresh_key('h')}"
    for _ in range(3):
        await outbox.record(workflow_id=wf, conflict_workflow_id=f"{wf}-c", tenant_id="acme",
                            fingerprint="fp", status="accepted", reason_code=None, raw="{}",
                            received_at=datetime.now(UTC))
    circuit = CircuitStore(pool)
    tripped = await circuit.signal(adapter="messaging", tenant_id="globex", kind="duplicate",
                                   key="drift:k1", limit=1, window=timedelta(minutes=10),
                                   policy_version=None)
    assert tripped.tripped
    ops = OpsStore(pool)
    for code in ("unreconciled_write", "other_code"):
        await ops.dead_letter(
            workflow_id=f"event/acme/{done_key}", error_class="dead_letter", error_code=code,
            state="DEAD_LETTERED", owner="ops", replay_plan="replay", redacted_payload=None,
            tenant_id="acme", event_id="e", correlation_id="c",
            action_key=send_key(done_key),
            replay_input=stored_request(done_key, send_key(done_key)))
    rows = {r["error_code"]: r for r in await ops.dead_letters()}
    # The receipt of done_key SUCCEEDED: the replay closes it as already done, sends nothing.
    await replay_dead_letter(pool, dict(await ops.dead_letter_row(
        rows["unreconciled_write"]["id"]) or {}), "ops.lead", connect=None, task_queue=queue)
    other = int(rows["other_code"]["id"])
    assert await ops.approve_dead_letter(other, actor="ops.lead", reason="fixed")
    number = await ops.claim_replay(other, actor="ops.lead")
    assert number == 1
    await ops.record_replay_result(other, actor="ops.lead", replay=number, result="succeeded")
