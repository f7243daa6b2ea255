"""One event is one trace (issue 11): the producer's submit, the workflow, every activity, the
HTTP calls to the CRM and the messaging target, and the reconciler of an unknown write all carry
the trace id the envelope's correlation id names; no span carries personal data."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from contracts import EventState, FinalOutcome, ReviewDecision
from tests.conftest import fresh_key, signed_event, wait_review, worker_settings
from tests.faults.conftest import send_key
from tollgate.dev.standins import StandIns
from tollgate.intake.submit import submit
from tollgate.observability import tracing
from tollgate.runtime.client import build_client
from tollgate.runtime.workers import draft_worker, main_worker

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"


@pytest.fixture
async def traced(
    spans: InMemorySpanExporter, dev_server: WorkflowEnvironment, database_url: str,
    standins: StandIns, tmp_path: Path,
) -> AsyncIterator[tuple[Client, str]]:
    queue = f"trace-{uuid.uuid4().hex[:8]}"
    settings = worker_settings(database_url, standins, tmp_path, queue)
    client = await build_client(dev_server.client.service_client.config.target_host,
                                env=settings.env)
    async with main_worker(client, settings), draft_worker(client, settings):
        yield client, queue


async def run_event(client: Client, queue: str, standins: StandIns, key: str,
                    **envelope: str) -> str:
    customer = fresh_key("C")
    standins.crm.upsert("acme", customer, first_name="Lanh", pet_name="Miumiu",
                        consent_messaging=True)
    ack = await submit(client, signed_event(customer, key=key, **envelope), task_queue=queue)
    handle = client.get_workflow_handle(ack.workflow_id, result_type=FinalOutcome)
    ticket = await wait_review(handle)
    await handle.execute_update("review", ReviewDecision(
        request_id=ticket["request_id"], decision="approve", reviewer="an.tran",
        role="care_lead", reason="ok", draft_version=ticket["draft_version"]))
    outcome = await handle.result()
    assert outcome.state == EventState.SUCCEEDED
    return ack.workflow_id


#: Spans of a caller asking the workflow something (the test's review_ticket polls, the
#: reviewer's decision): they belong to the caller's own trace, not the event's.
CALLERS = ("QueryWorkflow:", "HandleQuery:", "StartWorkflowUpdate:", "ValidateUpdate:",
           "HandleUpdate:")


def of_event(spans: list[ReadableSpan], workflow_id: str, action_key: str) -> set[int]:
    """Trace ids of every span the event's own run makes (its workflow or its reconciler)."""
    ids = {workflow_id, f"reconcile/{action_key}"}
    return {s.context.trace_id for s in spans
            if not s.name.startswith(CALLERS)
            and ((s.attributes or {}).get("temporalWorkflowID") in ids
                 or (s.attributes or {}).get("tollgate.workflow_id") in ids)}


async def test_one_event_is_one_trace_from_submit_to_receipt_and_reconciler(
    traced: tuple[Client, str], spans: InMemorySpanExporter, standins: StandIns,
) -> None:
    client, queue = traced
    plain_key, unknown_key = fresh_key("tr"), fresh_key("tr")
    plain = await run_event(client, queue, standins, plain_key)
    standins.messaging.inject("fail_after_write", key=send_key(unknown_key))
    unknown = await run_event(client, queue, standins, unknown_key,
                              correlation_id=f"00-{TRACE_ID}-00f067aa0ba902b7-01")
    finished = list(spans.get_finished_spans())

    [plain_trace] = of_event(finished, plain, send_key(plain_key))
    [unknown_trace] = of_event(finished, unknown, send_key(unknown_key))
    assert plain_trace != unknown_trace
    # A producer's W3C traceparent is continued, not replaced.
    assert unknown_trace == int(TRACE_ID, 16)

    names = [s.name for s in finished if s.context.trace_id == unknown_trace]
    for expected in ("tollgate.submit", "StartUpdateWithStartWorkflow:ProcessEvent",
                     "RunWorkflow:ProcessEvent", "RunActivity:validate_event",
                     "RunActivity:load_context", "RunActivity:draft_message",
                     # The gate's counts and the review's opening: one local activity in a
                     # one-marker-shape run (ADR 0053), as the approval and its mint are.
                     "RunActivity:gate_and_open_review", "RunActivity:approve_and_mint",
                     "RunActivity:execute_action",
                     "StartChildWorkflow:ReconcileWrite", "RunWorkflow:ReconcileWrite",
                     "RunActivity:lookup_write", "RunActivity:record_step"):
        assert expected in names, expected
    http = [s for s in finished if s.context.trace_id == unknown_trace
            and s.kind.name == "CLIENT" and s.name in ("GET", "POST")]
    # The CRM read for the context, the consent re-check at send time, the send, and the
    # reconciler's lookup by key, each inside its activity; URLs without the ids in them.
    urls = sorted((s.name, str(dict(s.attributes or {}).get("http.url")
                               or dict(s.attributes or {}).get("url.full"))) for s in http)
    crm, messaging = standins.crm_url.rstrip("/"), standins.messaging_url.rstrip("/")
    assert urls == sorted([("GET", f"{crm}/tenants/…"), ("GET", f"{crm}/tenants/…"),
                           ("POST", f"{messaging}/messages"), ("GET", f"{messaging}/messages/…")])
    by_id = {s.context.span_id: s for s in finished}
    for s in http:
        assert s.parent is not None
        assert by_id[s.parent.span_id].name.startswith("RunActivity:")
    # The model call is a GenAI span inside the draft activity (test_genai_spans.py: its
    # attributes).
    [chat] = [s for s in finished
              if s.context.trace_id == unknown_trace and s.name.startswith("chat ")]
    assert chat.parent is not None
    assert by_id[chat.parent.span_id].name == "RunActivity:draft_message"

    # No personal data: not the customer's name, pet or id, nor the message (which names
    # them); the action key is a hash of business ids and names the reconciler's workflow.
    text = repr([(s.name, dict(s.attributes or {}), [e.attributes for e in s.events])
                 for s in finished])
    for private in ("Lanh", "Miumiu", "C-"):
        assert private not in text


def test_scrubbed_urls_keep_only_the_origin_and_the_first_segment() -> None:
    assert tracing.scrubbed_url("http://u:p@crm:8301/tenants/acme/customers/C-1?x=1") == (
        "http://crm:8301/tenants/…")
    assert tracing.scrubbed_url("https://api.example/v1") == "https://api.example/v1"
