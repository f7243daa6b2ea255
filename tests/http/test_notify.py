"""Reviewers are told once per review and step (opened, SLA passed, expired), on the tenant's
channel, with a link to the inbox and nothing personal in the notice."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from email import message_from_string
from email.policy import default
from pathlib import Path

import asyncpg
import httpx
import pytest

from adapters.notify.channels import LocalSink, SlackWebhook, SmtpEmail
from adapters.postgres.notices import NoticeStore
from adapters.postgres.store import create_pool
from tollgate.http.notifier import load_channels, notify_once

INBOX = "http://127.0.0.1:8400"


@pytest.fixture(scope="module")
async def pool(database_url: str) -> AsyncIterator[asyncpg.Pool]:
    made = await create_pool(database_url)
    yield made
    await made.close()


async def review_waiting(pool: asyncpg.Pool, tenant: str = "acme", *, due_in: float = 3600,
                         version: int = 1) -> str:
    key = f"k-{uuid.uuid4().hex[:8]}"
    wf_id, now = f"event/{tenant}/{key}", datetime.now(UTC)
    await pool.execute(
        "INSERT INTO events (workflow_id, run_id, tenant_id, idempotency_key, event_id,"
        " event_type, schema_version, entity_id, correlation_id, payload_fingerprint,"
        " occurred_at, received_at, state, review_due_at, artifact_version)"
        " VALUES ($1, 'r', $2, $3, $3, 'CARE_DUE', 3, 'C-secret-customer', $3, 'fp', $4, $4,"
        " 'AWAITING_REVIEW', $5, $6)",
        wf_id, tenant, key, now, now + timedelta(seconds=due_in), version)
    return wf_id


async def test_each_step_is_told_once_with_a_link_and_no_personal_data(
        pool: asyncpg.Pool, tmp_path: Path) -> None:
    sink = LocalSink(tmp_path / "notices.jsonl")
    store = NoticeStore(pool)
    wf_id = await review_waiting(pool)
    await notify_once(store, {}, sink, INBOX)
    await notify_once(store, {}, sink, INBOX)  # a second pass sends nothing new
    mine = [t for t in sink.read() if wf_id in t]
    assert len(mine) == 1 and "review waiting" in mine[0]
    assert f"{INBOX}/inbox/review/{wf_id}" in mine[0]
    assert "C-secret-customer" not in mine[0]

    await pool.execute("UPDATE events SET review_due_at = now() - interval '1 minute'"
                       " WHERE workflow_id = $1", wf_id)
    await notify_once(store, {}, sink, INBOX)
    await pool.execute("UPDATE events SET state = 'EXPIRED' WHERE workflow_id = $1", wf_id)
    await notify_once(store, {}, sink, INBOX)
    await notify_once(store, {}, sink, INBOX)
    steps = [t.split(" · ")[0] for t in sink.read() if wf_id in t]
    assert steps == ["Tollgate: review waiting", "Tollgate: review past its SLA",
                     "Tollgate: review expired without a decision"]
    rows = await pool.fetch("SELECT step, status FROM review_notices WHERE workflow_id = $1",
                            wf_id)
    assert sorted((r["step"], r["status"]) for r in rows) == [
        ("expired", "SENT"), ("opened", "SENT"), ("sla", "SENT")]


async def test_slack_webhook_gets_text_and_an_unknown_outcome_is_never_resent(
        pool: asyncpg.Pool, tmp_path: Path) -> None:
    posts: list[dict[str, str]] = []
    fail = {"status": 504}

    def hook(request: httpx.Request) -> httpx.Response:
        posts.append(json.loads(request.content))
        return httpx.Response(fail["status"])

    (tmp_path / "notify.json").write_text(json.dumps(
        {"globex": {"slack_webhook": "https://hooks.example.test/T1"}}))
    async with httpx.AsyncClient(transport=httpx.MockTransport(hook)) as client:
        channels = load_channels(tmp_path / "notify.json", client)
        assert isinstance(channels["globex"], SlackWebhook)
        wf_id = await review_waiting(pool, "globex")
        sink = LocalSink(tmp_path / "sink.jsonl")
        store = NoticeStore(pool)
        await notify_once(store, channels, sink, INBOX)  # 504: it may have been posted
        fail["status"] = 200
        await notify_once(store, channels, sink, INBOX)
    mine = [p["text"] for p in posts if wf_id in p["text"]]
    assert len(mine) == 1  # at most once, even though the first answer was a 504
    assert not [t for t in sink.read() if wf_id in t]  # globex has its own channel
    status = await pool.fetchval("SELECT status FROM review_notices WHERE workflow_id = $1",
                                 wf_id)
    assert status == "UNKNOWN"


async def test_refused_notice_is_tried_again(pool: asyncpg.Pool, tmp_path: Path) -> None:
    answers = iter([httpx.Response(400), httpx.Response(200)])
    async with httpx.AsyncClient(transport=httpx.MockTransport(lambda _: next(answers))) as c:
        channel = SlackWebhook("https://hooks.example.test/T2", c)
        wf_id = await review_waiting(pool, "initech")
        store = NoticeStore(pool)
        sink = LocalSink(tmp_path / "sink.jsonl")
        await notify_once(store, {"initech": channel}, sink, INBOX)
        await notify_once(store, {"initech": channel}, sink, INBOX)
    row = await pool.fetchrow("SELECT status, attempts FROM review_notices"
                              " WHERE workflow_id = $1", wf_id)
    assert (row["status"], row["attempts"]) == ("SENT", 2)


class FakeSmtp:
    """Just enough of an SMTP server on loopback to receive one message per conversation."""

    def __init__(self) -> None:
        self.messages: list[str] = []

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"220 fake ESMTP\r\n")
        data: list[str] | None = None
        while line := (await reader.readline()).decode():
            if data is not None:
                if line == ".\r\n":
                    self.messages.append("".join(data))
                    data = None
                    writer.write(b"250 queued\r\n")
                else:
                    data.append(line)
                continue
            verb = line[:4].upper()
            if verb == "DATA":
                data = []
                writer.write(b"354 go on\r\n")
            elif verb == "QUIT":
                writer.write(b"221 bye\r\n")
                await writer.drain()
                break
            else:
                writer.write(b"250 ok\r\n")
            await writer.drain()
        writer.close()


async def test_email_channel_delivers_the_notice_over_smtp(pool: asyncpg.Pool,
                                                           tmp_path: Path) -> None:
    fake = FakeSmtp()
    server = await asyncio.start_server(fake.handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    (tmp_path / "notify.json").write_text(json.dumps({"hooli": {"email": {
        "host": "127.0.0.1", "port": port, "to": ["care-leads@hooli.test"],
        "starttls": False}}}))
    async with server, httpx.AsyncClient() as client:
        channels = load_channels(tmp_path / "notify.json", client)
        assert isinstance(channels["hooli"], SmtpEmail)
        wf_id = await review_waiting(pool, "hooli")
        await notify_once(NoticeStore(pool), channels, LocalSink(tmp_path / "s.jsonl"), INBOX)
    received = [message_from_string(m, policy=default) for m in fake.messages]
    mine = [m for m in received if wf_id in m.get_content()]
    assert len(mine) == 1
    assert mine[0]["To"] == "care-leads@hooli.test"
    assert mine[0]["Subject"] == "Tollgate: review waiting"
    assert f"{INBOX}/inbox/review/{wf_id}" in mine[0].get_content()


async def test_email_server_down_is_not_sent_and_retried(pool: asyncpg.Pool,
                                                         tmp_path: Path) -> None:
    from tollgate.dev.stack import free_port

    channel = SmtpEmail("127.0.0.1", free_port(), "t@localhost", ["x@y.test"])
    wf_id = await review_waiting(pool, "umbrella")
    await notify_once(NoticeStore(pool), {"umbrella": channel}, LocalSink(tmp_path / "s"), INBOX)
    status = await pool.fetchval("SELECT status FROM review_notices WHERE workflow_id = $1",
                                 wf_id)
    assert status == "FAILED"  # nothing reached a server, so the next pass tries again
