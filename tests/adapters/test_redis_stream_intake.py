"""Redis Streams as a producer, against a real server (Debian's redis-server) and the
time-skipping Temporal server with the full worker: an entry becomes one event through
``submit()``, acked only after the answer is durable; a consumer killed between read and ack
leaves the entry to a new consumer's XAUTOCLAIM, and the event is processed exactly once;
poison is moved to the dead-letter stream with its reason while the next entry goes through."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import pytest
import redis.asyncio as aioredis
from cloudevents.core.bindings import rabbitmq as ce_rabbitmq
from cloudevents.core.formats.json import JSONFormat
from cloudevents.core.v1.event import CloudEvent
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from structlog.testing import capture_logs
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from adapters.broker.redis_streams import (
    SOURCE_ID_FIELD,
    Outcome,
    RedisStreamIntake,
    StreamEntry,
    StreamLimits,
)
from policies.entry_signing import sign_entry
from policies.keys import quarantine_workflow_id
from tests.conftest import TENANT_SECRETS, TEST_KEYS_FILE, signed_event
from tests.eventually import eventually
from tests.redis_server import redis_binary, redis_node
from tollgate.intake.redis_stream import entry_handler, report_problem
from tollgate.observability import tracing

#: Short enough that a test's reclaim comes quickly, long enough that a live consumer's entry
#: is never taken from it mid-intake in these tests.
FAST = StreamLimits(claim_idle_s=0.5, max_deliveries=3, handler_timeout_s=20,
                    retry_pause_s=0.05, block_ms=100)


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    binary = redis_binary()
    if binary is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    with redis_node(binary) as url:
        yield url


Make = Callable[..., Awaitable[RedisStreamIntake]]


@pytest.fixture
async def make_intake(redis_url: str) -> AsyncIterator[Make]:
    """Consumers of one fresh stream and group per test."""
    stream = f"tollgate.events.{uuid.uuid4().hex[:6]}"
    made: list[RedisStreamIntake] = []

    async def make(consumer: str, limits: StreamLimits = FAST) -> RedisStreamIntake:
        intake = RedisStreamIntake(redis_url, consumer, stream=stream,
                                   dead_stream=f"{stream}.dead", limits=limits,
                                   report=report_problem)
        await intake.connect()
        made.append(intake)
        return intake

    yield make
    for intake in made:
        await intake.close()


@pytest.fixture
async def intake(make_intake: Make) -> RedisStreamIntake:
    return await make_intake("c1")


async def run_until(intake: RedisStreamIntake,
                    handler: Callable[[StreamEntry], Awaitable[Outcome]],
                    done: Callable[[], Awaitable[bool]]) -> None:
    task = asyncio.create_task(intake.consume(handler))
    try:
        await eventually(done, "the consumer getting there", timeout=30)
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


def key_of(raw: str) -> str:
    return str(json.loads(raw)["idempotency_key"])


async def rows_for(pool: asyncpg.Pool, key: str) -> int:
    return int(await pool.fetchval("SELECT count(*) FROM events WHERE idempotency_key = $1",
                                   key))


@pytest.mark.parametrize("killed", ["after the durable start", "before the intake"])
async def test_a_consumer_killed_between_read_and_ack_leaves_the_event_processed_once(
        killed: str, make_intake: Make,
        worker_client: tuple[Client, str], pool: asyncpg.Pool) -> None:
    client, queue = worker_client
    real = entry_handler(client, queue, TENANT_SECRETS)
    first, second = await make_intake("doomed"), await make_intake("survivor")
    raw = signed_event("C-1001")
    await first.publish({b"body": raw.encode()})
    read = asyncio.Event()
    first_answers: list[Outcome] = []

    async def dies_before_the_ack(entry: StreamEntry) -> Outcome:
        if killed == "after the durable start":
            first_answers.append(await real(entry))
        read.set()
        await asyncio.Event().wait()  # the process dies here: XREADGROUP done, no XACK
        raise AssertionError("unreachable")

    doomed = asyncio.create_task(first.consume(dies_before_the_ack))
    await asyncio.wait_for(read.wait(), 30)
    doomed.cancel()
    with pytest.raises(asyncio.CancelledError):
        await doomed
    assert await first.pending() == 1  # read, never acked

    answers: list[Outcome] = []

    async def recorded(entry: StreamEntry) -> Outcome:
        answers.append(await real(entry))
        return answers[-1]

    async def drained() -> bool:
        return bool(answers) and await second.pending() == 0

    await run_until(second, recorded, drained)
    if killed == "after the durable start":  # the start was durable, only the ack was lost
        assert (first_answers, answers) == (["accepted"], ["duplicate"])
    else:
        assert (first_answers, answers) == ([], ["accepted"])
    assert await rows_for(pool, key_of(raw)) == 1
    assert await second.dead_letters() == []


async def test_poison_is_moved_aside_with_its_reason_and_the_next_entry_goes_through(
        intake: RedisStreamIntake, worker_client: tuple[Client, str],
        pool: asyncpg.Pool) -> None:
    client, queue = worker_client
    good = signed_event("C-1001")
    poison: list[dict[bytes, bytes]] = [
        {b"note": b"no body at all"},
        {b"body": b"{not json"},
        {b"body": b"\xff\xfe not utf-8"},
        {b"body": good.replace('"C-1001"', '"C-\\u0000"', 1).encode()},
        {b"body": b"[" * 100 + b"]" * 100},
        {b"body": b'"' + b"x" * 300_000 + b'"'},
    ]
    ids = [await intake.publish(fields) for fields in poison]
    await intake.publish({b"body": good.encode()})
    answers: list[Outcome] = []
    real = entry_handler(client, queue, TENANT_SECRETS)

    async def recorded(entry: StreamEntry) -> Outcome:
        answers.append(await real(entry))
        return answers[-1]

    async def all_settled() -> bool:
        return answers == ["accepted"] and len(await intake.dead_letters()) == len(poison)

    await run_until(intake, recorded, all_settled)
    letters = await intake.dead_letters()
    assert [fields[SOURCE_ID_FIELD].decode() for fields, _ in letters] == ids
    assert [reason.split(":")[0] for _, reason in letters] == [
        "no_body", "not_json", "not_utf8", "nul", "too_deep", "too_large"]
    assert letters[3][1] == "nul: $.entity_id: contains a NUL character"  # no value in it
    assert letters[1][0][b"body"] == b"{not json"  # kept as it came, for the replay
    assert await intake.pending() == 0
    assert await rows_for(pool, key_of(good)) == 1


async def test_an_entry_without_an_answer_gets_bounded_tries_and_holds_back_nobody(
        intake: RedisStreamIntake, worker_client: tuple[Client, str],
        pool: asyncpg.Pool) -> None:
    """Temporal refusing one entry (here: a handler that always fails for it) costs that entry
    its tries, then a dead letter; the entry behind it is answered meanwhile."""
    client, queue = worker_client
    real = entry_handler(client, queue, TENANT_SECRETS)
    stuck, fine = signed_event("C-1001"), signed_event("C-1002")
    await intake.publish({b"body": stuck.encode()})
    await intake.publish({b"body": fine.encode()})
    tries: list[str] = []
    answers: list[Outcome] = []

    async def fails_for_one(entry: StreamEntry) -> Outcome:
        if entry.fields[b"body"].decode() == stuck:
            tries.append(entry.entry_id)
            raise ConnectionResetError("no answer for this one")
        answers.append(await real(entry))
        return answers[-1]

    async def moved_aside() -> bool:
        return bool(await intake.dead_letters())

    with capture_logs() as logs:
        await run_until(intake, fails_for_one, moved_aside)
    told = [(e["event"], e.get("error") or e.get("reason")) for e in logs
            if e["event"].startswith("stream_") and e.get("entry_id") == tries[0]]
    assert told == [("stream_no_answer", "ConnectionResetError")] * 3 + [
        ("stream_dead_lettered", "delivered_too_often")]  # the operator sees why, no text
    [(fields, reason)] = await intake.dead_letters()
    assert fields[b"body"].decode() == stuck
    assert reason == "delivered_too_often: delivered 3 times without an answer"
    assert len(tries) == FAST.max_deliveries
    assert answers == ["accepted"]
    assert await rows_for(pool, key_of(fine)) == 1 and await rows_for(pool, key_of(stuck)) == 0
    assert await intake.pending() == 0


async def test_an_envelope_the_workflow_refuses_is_quarantined_and_acked(
        intake: RedisStreamIntake, worker_client: tuple[Client, str],
        pool: asyncpg.Pool) -> None:
    client, queue = worker_client
    event = json.loads(signed_event("C-1001"))
    forged = json.dumps({**event, "signature": "sha256=" + "0" * 64})
    await intake.publish({b"body": forged.encode()})
    answers: list[Outcome] = []
    real = entry_handler(client, queue, TENANT_SECRETS)

    async def recorded(entry: StreamEntry) -> Outcome:
        answers.append(await real(entry))
        return answers[-1]

    async def acked() -> bool:
        return bool(answers) and await intake.pending() == 0

    await run_until(intake, recorded, acked)
    assert answers == ["quarantined"]
    reason = await eventually(lambda: pool.fetchval(
        "SELECT reason_code FROM quarantine WHERE workflow_id = $1",
        quarantine_workflow_id(forged)),
        "the quarantine row")
    assert reason == "bad_signature"
    assert await intake.dead_letters() == []


def care_due_cloud_event(event_id: str, **extra: str) -> CloudEvent:
    event = json.loads(signed_event("C-1001"))
    return CloudEvent({"id": event_id, "source": "/crm-scheduler", "type": "CARE_DUE",
                       "time": datetime.now(UTC), "subject": "C-1001", "schemaversion": "3",
                       "datacontenttype": "application/json", **extra}, event["payload"])


def entry_fields(message: Any, secret: str | None = None) -> dict[bytes, bytes]:
    fields = {b"body": message.body, b"content-type": message.content_type.encode(),
              **{k.encode(): str(v).encode() for k, v in message.headers.items()}}
    if secret is not None:
        fields[b"signature"] = sign_entry(fields, secret).encode()
    return fields


async def test_cloudevents_in_both_modes_are_accepted_when_the_entry_is_signed(
        intake: RedisStreamIntake, worker_client: tuple[Client, str],
        pool: asyncpg.Pool) -> None:
    client, queue = worker_client
    secret = TENANT_SECRETS["acme"]
    ids = [f"ce-{uuid.uuid4().hex[:10]}" for _ in range(2)]
    structured = ce_rabbitmq.to_structured(care_due_cloud_event(ids[0], tenant="acme"),
                                           JSONFormat())
    binary = ce_rabbitmq.to_binary(care_due_cloud_event(ids[1], tenant="acme"), JSONFormat())
    unsigned = entry_fields(binary)
    tampered = {**entry_fields(binary, secret), b"ce-subject": b"C-1002"}
    no_tenant = entry_fields(ce_rabbitmq.to_binary(care_due_cloud_event("ce-x"),
                                                   JSONFormat()), secret)
    for fields in (entry_fields(structured, secret), entry_fields(binary, secret),
                   unsigned, tampered, no_tenant):
        await intake.publish(fields)
    answers: list[Outcome] = []
    real = entry_handler(client, queue, TENANT_SECRETS)

    async def recorded(entry: StreamEntry) -> Outcome:
        answers.append(await real(entry))
        return answers[-1]

    async def settled() -> bool:
        return len(answers) == 2 and len(await intake.dead_letters()) == 3

    await run_until(intake, recorded, settled)
    assert answers == ["accepted", "accepted"]
    for event_id in ids:  # no idempotencykey extension: the CloudEvent's id is the key
        assert await rows_for(pool, event_id) == 1
    assert [reason.split(":")[0] for _, reason in await intake.dead_letters()] == [
        "signature_missing", "bad_signature", "cloudevent_incomplete"]


async def test_a_consumer_process_sigkilled_before_its_ack_leaves_the_event_processed_once(
        make_intake: Make, worker_client: tuple[Client, str], pool: asyncpg.Pool,
        redis_url: str, env: WorkflowEnvironment, tmp_path: Path) -> None:
    """``python -m tollgate.runtime.redis_intake`` as a real process: its Redis user may not
    XACK, so it is caught after XREADGROUP and the durable start, and SIGKILLed there."""
    client, queue = worker_client
    survivor = await make_intake("survivor")
    admin = aioredis.Redis.from_url(redis_url)
    await admin.execute_command("ACL", "SETUSER", "noack", "on", ">noack-pw", "~*", "&*",
                                "+@all", "-xack")
    await admin.aclose()
    raw = signed_event("C-1001")
    await survivor.publish({b"body": raw.encode()})
    (tmp_path / "tenants.json").write_text(json.dumps(TENANT_SECRETS))
    process_env = {
        "PATH": os.environ.get("PATH", ""), "TOLLGATE_STATE_DIR": str(tmp_path),
        "TEMPORAL_ADDRESS": env.client.service_client.config.target_host,
        "TOLLGATE_TASK_QUEUE": queue, "TOLLGATE_KEYS_FILE": str(TEST_KEYS_FILE),
        "TOLLGATE_TENANTS_FILE": str(tmp_path / "tenants.json"),
        "TOLLGATE_REDIS_URL": redis_url.replace("redis://", "redis://noack:noack-pw@"),
        "TOLLGATE_REDIS_STREAM": survivor.stream, "TOLLGATE_REDIS_DEAD_STREAM":
        survivor.dead_stream, "TOLLGATE_REDIS_CONSUMER": "doomed-process",
        "TOLLGATE_REDIS_CLAIM_IDLE_S": "600", "PYTHONUNBUFFERED": "1"}
    log = tmp_path / "consumer.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tollgate.runtime.redis_intake"], env=process_env,
            stdout=out, stderr=subprocess.STDOUT, cwd=Path(__file__).parents[2])
        try:
            await eventually(lambda: b'"answer": "accepted"' in log.read_bytes(),
                             "the process's answer: accepted", timeout=60)
            assert await rows_for(pool, key_of(raw)) == 1
            assert await survivor.pending() == 1  # read and started, never acked
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
    assert proc.returncode == -signal.SIGKILL
    answers: list[Outcome] = []
    real = entry_handler(client, queue, TENANT_SECRETS)

    async def recorded(entry: StreamEntry) -> Outcome:
        answers.append(await real(entry))
        return answers[-1]

    async def drained() -> bool:
        return bool(answers) and await survivor.pending() == 0

    await run_until(survivor, recorded, drained)
    assert answers == ["duplicate"]
    assert await rows_for(pool, key_of(raw)) == 1


async def test_an_entry_trimmed_before_its_ack_is_dropped_from_the_pending_list_with_a_warning(
        intake: RedisStreamIntake, redis_url: str) -> None:
    entry_id = await intake.publish({b"body": b"{}"})
    raw = aioredis.Redis.from_url(redis_url)
    await raw.xreadgroup(intake.group, "crashed", {intake.stream: ">"}, count=1)
    await raw.xdel(intake.stream, entry_id)  # a producer's XTRIM went past it
    await raw.aclose()
    await asyncio.sleep(FAST.claim_idle_s)

    async def never(entry: StreamEntry) -> Outcome:
        raise AssertionError("a trimmed entry has nothing to hand on")

    with capture_logs() as logs:
        await intake.reclaim(never)
    assert await intake.pending() == 0
    assert [(e["event"], e["count"]) for e in logs] == [("stream_trimmed_before_ack", "1")]


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.use_provider(provider)
    yield exporter
    tracing.use_provider(None)


async def test_an_entry_is_a_messaging_span_linked_from_its_events_trace(
        intake: RedisStreamIntake, worker_client: tuple[Client, str],
        spans: InMemorySpanExporter) -> None:
    """Issue 29 item 7: the messaging attributes on the delivery; the event's own trace (from
    its correlation id) links back to it; a poison entry's span names its rule."""
    client, queue = worker_client
    good = signed_event("C-1001")
    producer = "4bf92f3577b34da6a3ce929d0e0e4736"
    good_id = await intake.publish({b"body": good.encode(),
                                    b"traceparent": f"00-{producer}-00f067aa0ba902b7-01".encode()})
    await intake.publish({b"note": b"no body here"})
    answers: list[Outcome] = []
    real = entry_handler(client, queue, TENANT_SECRETS)

    async def recorded(entry: StreamEntry) -> Outcome:
        answers.append(await real(entry))
        return answers[-1]

    async def both_handled() -> bool:
        return bool(answers) and bool(await intake.dead_letters())

    await run_until(intake, recorded, both_handled)

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
