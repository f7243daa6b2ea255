"""An entry is a messaging span (issue 29 item 7), against a real redis-server and the
time-skipping Temporal server: the messaging attributes on the delivery; the event's own trace
(from its correlation id) links back to it; a poison entry's span names its rule."""

from __future__ import annotations

from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from temporalio.client import Client

from adapters.broker.redis_streams import RedisStreamIntake
from tests.adapters.redis_kit import Answers, run_until
from tests.conftest import TENANT_SECRETS, signed_event
from tollgate.intake.redis_stream import entry_handler


async def test_an_entry_is_a_messaging_span_linked_from_its_events_trace(
        stream_intake: RedisStreamIntake, worker_client: tuple[Client, str],
        spans: InMemorySpanExporter) -> None:
    intake = stream_intake
    good = signed_event("C-1001")
    producer = "4bf92f3577b34da6a3ce929d0e0e4736"
    good_id = await intake.publish({b"body": good.encode(),
                                    b"traceparent": f"00-{producer}-00f067aa0ba902b7-01".encode()})
    await intake.publish({b"note": b"no body here"})
    answers = Answers(entry_handler(*worker_client, TENANT_SECRETS))

    async def both_handled() -> bool:
        return bool(answers) and bool(await intake.dead_letters())

    await run_until(intake, answers, both_handled)

    finished = list(spans.get_finished_spans())
    processed = {(s.attributes or {}).get("messaging.message.id"): s for s in finished
                 if s.name == f"process {intake.stream}"}
    span = processed.pop(good_id)
    assert dict(span.attributes or {}) == {
        "messaging.system": "redis", "messaging.operation.type": "process",
        "messaging.operation.name": "process", "messaging.destination.name": intake.stream,
        "messaging.consumer.group.name": intake.group, "messaging.message.id": good_id,
        "messaging.message.body.size": len(good.encode()),
        "tollgate.intake.outcome": "accepted"}
    assert span.kind.name == "CONSUMER" and span.context.trace_id == int(producer, 16)
    [submitted] = [s for s in finished if s.name == "tollgate.submit"]
    assert [link.context.span_id for link in submitted.links] == [span.context.span_id]
    [poison] = processed.values()
    assert (poison.attributes or {})["error.type"] == "no_body"
    text = repr([dict(s.attributes or {}) for s in finished])
    assert "C-1001" not in text and "no body here" not in text
