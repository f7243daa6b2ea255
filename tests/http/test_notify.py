"""Reviewers are told once per review and step (opened, SLA passed, expired), on the tenant's
channel, with a link to the inbox and nothing personal in the notice."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from email import message_from_bytes
from email.message import EmailMessage
from email.policy import default
from pathlib import Path

import asyncpg
import httpx
import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import Envelope

from adapters.notify.channels import LocalSink, SlackWebhook, SmtpEmail
from adapters.postgres.notices import NoticeStore
from adapters.postgres.pool import create_pool
from tests.conftest import fresh_key
from tests.ports import free_port
from tollgate.http.notifier import load_channels, notify_once

INBOX = "http://127.0.0.1:8400"


@pytest.fixture(scope="module")
async def pool(database_url: str) -> AsyncIterator[asyncpg.Pool]:
    made = await create_pool(database_url)
    yield made
    await made.close()


async def review_waiting(pool: asyncpg.Pool, tenant: str = "acme", *, due_in: float = 3600,
                         version: int = 1) -> str:
    key = fresh_key("k")
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
    assert row is not None and (row["status"], row["attempts"]) == ("SENT", 2)


class Inbox:
    """aiosmtpd's handler: keeps each message's content as the server received it."""

    def __init__(self) -> None:
        self.messages: list[bytes] = []

    async def handle_DATA(self, server: object, session: object, envelope: Envelope) -> str:
        assert isinstance(envelope.content, bytes)
        self.messages.append(envelope.content)
        return "250 OK"

    def received(self) -> list[EmailMessage]:
        """The messages parsed (the body travels quoted-printable, wrapped at 76 columns)."""
        return [message_from_bytes(m, policy=default) for m in self.messages]


@contextmanager
def smtp_on(port: int) -> Iterator[Inbox]:
    """A real SMTP server (aiosmtpd, in a thread of its own) on a loopback port."""
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield inbox
    finally:
        controller.stop()


@pytest.fixture
def smtp_server() -> Iterator[tuple[int, Inbox]]:
    port = free_port()
    with smtp_on(port) as inbox:
        yield port, inbox


async def test_email_channel_delivers_the_notice_over_smtp(
        pool: asyncpg.Pool, tmp_path: Path, smtp_server: tuple[int, Inbox]) -> None:
    port, inbox = smtp_server
    (tmp_path / "notify.json").write_text(json.dumps({"hooli": {"email": {
        "host": "127.0.0.1", "port": port, "to": ["care-leads@hooli.test"],
        "starttls": False}}}))
    async with httpx.AsyncClient() as client:
        channels = load_channels(tmp_path / "notify.json", client)
        assert isinstance(channels["hooli"], SmtpEmail)
        wf_id = await review_waiting(pool, "hooli")
        await notify_once(NoticeStore(pool), channels, LocalSink(tmp_path / "s.jsonl"), INBOX)
        # A second pass sends nothing new: the notice is kept as SENT.
        await notify_once(NoticeStore(pool), channels, LocalSink(tmp_path / "s.jsonl"), INBOX)
    received = inbox.received()
    mine = [m for m in received if wf_id in m.get_content()]
    assert len(mine) == 1
    assert mine[0]["To"] == "care-leads@hooli.test"
    assert mine[0]["Subject"] == "Tollgate: review waiting"
    assert f"{INBOX}/inbox/review/{wf_id}" in mine[0].get_content()
    assert not [m for m in received
                if "C-secret-customer" in m.as_string() + m.get_content()]


async def test_email_server_down_is_not_sent_and_retried(pool: asyncpg.Pool,
                                                         tmp_path: Path) -> None:
    port = free_port()  # nothing listens there yet
    channel = SmtpEmail("127.0.0.1", port, "t@localhost", ["x@y.test"])
    wf_id = await review_waiting(pool, "umbrella")
    store, sink = NoticeStore(pool), LocalSink(tmp_path / "s")
    await notify_once(store, {"umbrella": channel}, sink, INBOX)
    status = await pool.fetchval("SELECT status FROM review_notices WHERE workflow_id = $1",
                                 wf_id)
    assert status == "FAILED"  # nothing reached a server, so the next pass tries again
    with smtp_on(port) as inbox:
        await notify_once(store, {"umbrella": channel}, sink, INBOX)
    assert [m for m in inbox.received() if wf_id in m.get_content()] != []
    row = await pool.fetchrow("SELECT status, attempts FROM review_notices"
                              " WHERE workflow_id = $1", wf_id)
    assert row is not None and (row["status"], row["attempts"]) == ("SENT", 2)
