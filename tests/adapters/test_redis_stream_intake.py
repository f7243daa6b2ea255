"""Redis Streams as a producer, against a real server (Debian's redis-server) and the
time-skipping Temporal server with the full worker: an entry becomes one event through
``submit()``, acked only after the answer is durable; a consumer killed between read and ack
leaves the entry to a new consumer's XAUTOCLAIM, and the event is processed exactly once;
poison is moved to the dead-letter stream with its reason while the next entry goes through."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import Any

import asyncpg
import pytest
import redis.asyncio as aioredis
from cloudevents.core.bindings import rabbitmq as ce_rabbitmq
from cloudevents.core.formats.json import JSONFormat
from cloudevents.core.v1.event import CloudEvent
from structlog.testing import capture_logs
from temporalio.client import Client

from adapters.broker.cancel import within
from adapters.broker.redis_streams import SOURCE_ID_FIELD, Outcome, RedisStreamIntake, StreamEntry
from policies.entry_signing import sign_entry
from policies.keys import quarantine_workflow_id
from tests.adapters.redis_kit import FAST, Answers, Make, drain, key_of, rows_for, run_until
from tests.conftest import TENANT_SECRETS, fresh_key, signed_event
from tests.eventually import eventually
from tollgate.intake.redis_stream import entry_handler


@pytest.mark.parametrize("killed", ["after the durable start", "before the intake"])
async def test_a_consumer_killed_between_read_and_ack_leaves_the_event_processed_once(
        killed: str, make_stream_intake: Make,
        worker_client: tuple[Client, str], pool: asyncpg.Pool) -> None:
    client, queue = worker_client
    real = entry_handler(client, queue, TENANT_SECRETS)
    first, second = await make_stream_intake("doomed"), await make_stream_intake("survivor")
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
    await within(read.wait(), 30)
    doomed.cancel()
    with pytest.raises(asyncio.CancelledError):
        await doomed
    assert await first.pending() == 1  # read, never acked

    answers = Answers(real)
    await drain(second, answers)
    if killed == "after the durable start":  # the start was durable, only the ack was lost
        assert (first_answers, answers) == (["accepted"], ["duplicate"])
    else:
        assert (first_answers, answers) == ([], ["accepted"])
    assert await rows_for(pool, key_of(raw)) == 1
    assert await second.dead_letters() == []


async def test_poison_is_moved_aside_with_its_reason_and_the_next_entry_goes_through(
        stream_intake: RedisStreamIntake, worker_client: tuple[Client, str],
        pool: asyncpg.Pool) -> None:
    intake = stream_intake
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
    answers = Answers(entry_handler(*worker_client, TENANT_SECRETS))

    async def all_settled() -> bool:
        return answers == ["accepted"] and len(await intake.dead_letters()) == len(poison)

    await run_until(intake, answers, all_settled)
    letters = await intake.dead_letters()
    assert [fields[SOURCE_ID_FIELD].decode() for fields, _ in letters] == ids
    assert [reason.split(":")[0] for _, reason in letters] == [
        "no_body", "not_json", "not_utf8", "nul", "too_deep", "too_large"]
    assert letters[3][1] == "nul: $.entity_id: contains a NUL character"  # no value in it
    assert letters[1][0][b"body"] == b"{not json"  # kept as it came, for the replay
    assert await intake.pending() == 0
    assert await rows_for(pool, key_of(good)) == 1


async def test_an_entry_without_an_answer_gets_bounded_tries_and_holds_back_nobody(
        stream_intake: RedisStreamIntake, worker_client: tuple[Client, str],
        pool: asyncpg.Pool) -> None:
    """Temporal refusing one entry (here: a handler that always fails for it) costs that entry
    its tries, then a dead letter; the entry behind it is answered meanwhile."""
    intake = stream_intake
    real = entry_handler(*worker_client, TENANT_SECRETS)
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
    assert reason == ("delivered_too_often: 3 tries without an answer "
                      "(last: ConnectionResetError)")
    assert len(tries) == FAST.max_deliveries
    assert answers == ["accepted"]
    assert await rows_for(pool, key_of(fine)) == 1 and await rows_for(pool, key_of(stuck)) == 0
    assert await intake.pending() == 0


async def test_an_envelope_the_workflow_refuses_is_quarantined_and_acked(
        stream_intake: RedisStreamIntake, worker_client: tuple[Client, str],
        pool: asyncpg.Pool) -> None:
    event = json.loads(signed_event("C-1001"))
    forged = json.dumps({**event, "signature": "sha256=" + "0" * 64})
    await stream_intake.publish({b"body": forged.encode()})
    answers = Answers(entry_handler(*worker_client, TENANT_SECRETS))
    await drain(stream_intake, answers)
    assert answers == ["quarantined"]
    reason = await eventually(lambda: pool.fetchval(
        "SELECT reason_code FROM quarantine WHERE workflow_id = $1",
        quarantine_workflow_id(forged)), "the quarantine row")
    assert reason == "bad_signature"
    assert await stream_intake.dead_letters() == []


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
        stream_intake: RedisStreamIntake, worker_client: tuple[Client, str],
        pool: asyncpg.Pool) -> None:
    secret = TENANT_SECRETS["acme"]
    ids = [fresh_key("ce") for _ in range(2)]
    structured = ce_rabbitmq.to_structured(care_due_cloud_event(ids[0], tenant="acme"),
                                           JSONFormat())
    binary = ce_rabbitmq.to_binary(care_due_cloud_event(ids[1], tenant="acme"), JSONFormat())
    unsigned = entry_fields(binary)
    tampered = {**entry_fields(binary, secret), b"ce-subject": b"C-1002"}
    no_tenant = entry_fields(ce_rabbitmq.to_binary(care_due_cloud_event("ce-x"),
                                                   JSONFormat()), secret)
    for fields in (entry_fields(structured, secret), entry_fields(binary, secret),
                   unsigned, tampered, no_tenant):
        await stream_intake.publish(fields)
    answers = Answers(entry_handler(*worker_client, TENANT_SECRETS))

    async def settled() -> bool:
        return len(answers) == 2 and len(await stream_intake.dead_letters()) == 3

    await run_until(stream_intake, answers, settled)
    assert answers == ["accepted", "accepted"]
    for event_id in ids:  # no idempotencykey extension: the CloudEvent's id is the key
        assert await rows_for(pool, event_id) == 1
    assert [reason.split(":")[0] for _, reason in await stream_intake.dead_letters()] == [
        "signature_missing", "bad_signature", "cloudevent_incomplete"]


async def test_an_entry_trimmed_before_its_ack_is_dropped_from_the_pending_list_with_a_warning(
        stream_intake: RedisStreamIntake, redis_url: str) -> None:
    entry_id = await stream_intake.publish({b"body": b"{}"})
    raw = aioredis.Redis.from_url(redis_url)
    await raw.xreadgroup(stream_intake.group, "crashed", {stream_intake.stream: ">"}, count=1)
    await raw.xdel(stream_intake.stream, entry_id)  # a producer's XTRIM went past it
    await raw.aclose()
    await asyncio.sleep(FAST.claim_idle_s)

    async def never(entry: StreamEntry) -> Outcome:
        raise AssertionError("a trimmed entry has nothing to hand on")

    with capture_logs() as logs:
        await stream_intake.reclaim(never)
    assert await stream_intake.pending() == 0
    assert [(e["event"], e["count"]) for e in logs] == [("stream_trimmed_before_ack", "1")]

