"""Poison isolation in the outbox relay (issue 25): a row that keeps failing for a reason of its
own is moved aside after ``MAX_DELIVERY_ATTEMPTS`` tries, and holds back only the later rows of
its own tenant and entity meanwhile; "Temporal is unreachable" counts no try at all. A start
nobody answers is given up after ``TOLLGATE_RELAY_SEND_TIMEOUT_S``."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import asyncpg
import pytest
from fastapi import HTTPException

from adapters.postgres.outbox import OutboxStore
from contracts import EventState, IntakeAck
from tollgate.config.base import ConfigError
from tollgate.config.settings import Settings
from tollgate.http import relay
from tollgate.http.relay import MAX_DELIVERY_ATTEMPTS, RelayPolicy, relay_once

#: No waiting between a row's tries, so a test sees every try at once.
NO_WAIT = RelayPolicy(backoff_s=0.0, max_backoff_s=0.0)


class FakeLink:
    """A TemporalLink whose client is a placeholder (the send itself is replaced below)."""

    def __init__(self, reachable: bool = True) -> None:
        self.reachable = reachable

    async def client(self) -> Any:
        if not self.reachable:
            raise HTTPException(503, "Temporal is unreachable; try again")
        return object()

    def forget(self) -> None:
        pass


@pytest.fixture
def delivered(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Keys the fake Temporal accepted, in order; a key starting ``poison`` always fails."""
    seen: list[str] = []

    async def submit(_client: Any, raw: str, *, task_queue: str, recorded: Any) -> IntakeAck:
        key = json.loads(raw)["idempotency_key"]
        if key.startswith("poison"):
            raise ValueError("the workflow refuses this row")
        seen.append(key)
        return IntakeAck(status="accepted", workflow_id=f"event/x/{key}",
                         state=EventState.RECEIVED)

    monkeypatch.setattr(relay.intake, "submit", submit)
    return seen


async def post(outbox: OutboxStore, tenant: str, entity: str, key: str) -> None:
    raw = json.dumps({"tenant_id": tenant, "entity_id": entity, "idempotency_key": key})
    await outbox.record(workflow_id=f"event/{tenant}/{key}", conflict_workflow_id=f"q/{key}",
                        tenant_id=tenant, fingerprint=key, status="accepted", reason_code=None,
                        raw=raw, received_at=datetime.now(UTC))


async def drain(outbox: OutboxStore, link: FakeLink, passes: int = 50) -> None:
    for _ in range(passes):
        if await relay_once(outbox, link, "q", NO_WAIT) is None:  # type: ignore[arg-type]
            return


@pytest.fixture
async def outbox(pool: asyncpg.Pool) -> OutboxStore:
    await pool.execute("DELETE FROM outbox")
    return OutboxStore(pool)


def keys(prefix: str) -> Callable[[str], str]:
    run = uuid.uuid4().hex[:6]
    return lambda name: f"{prefix}-{name}-{run}"


async def test_a_poison_row_of_one_tenant_never_holds_back_another(
        outbox: OutboxStore, delivered: list[str], pool: asyncpg.Pool) -> None:
    k = keys("iso")
    await post(outbox, "acme", "C-1", "poison-" + k("a"))
    await post(outbox, "globex", "C-9", k("b"))
    await post(outbox, "acme", "C-2", k("c"))

    await drain(outbox, FakeLink())

    assert delivered == [k("b"), k("c")]
    aside = await pool.fetchrow("SELECT attempts, last_error, parked_reason FROM outbox"
                                " WHERE parked_at IS NOT NULL")
    assert dict(aside) == {"attempts": MAX_DELIVERY_ATTEMPTS, "last_error": "ValueError",
                           "parked_reason": "delivery_failed"}
    assert await outbox.backlog() == 0


async def test_a_stuck_row_holds_back_only_its_own_entity_until_moved_aside(
        outbox: OutboxStore, delivered: list[str]) -> None:
    k = keys("order")
    await post(outbox, "acme", "C-1", "poison-" + k("first"))
    await post(outbox, "acme", "C-1", k("second"))
    await post(outbox, "acme", "C-5", k("other"))

    # One try of the poison row, then the one row that is free to go: the other entity's.
    for _ in range(2):
        await relay_once(outbox, FakeLink(), "q", RelayPolicy(backoff_s=60))  # type: ignore[arg-type]
    assert delivered == [k("other")]
    assert await relay_once(outbox, FakeLink(), "q") is None  # type: ignore[arg-type]

    await outbox.pool.execute("UPDATE outbox SET next_attempt_at = NULL")
    await drain(outbox, FakeLink())
    # Once the stuck row is aside, the same entity's later row goes.
    assert delivered == [k("other"), k("second")]


async def test_temporal_unreachable_counts_no_try_and_moves_nothing_aside(
        outbox: OutboxStore, delivered: list[str], pool: asyncpg.Pool) -> None:
    k = keys("down")
    await post(outbox, "acme", "C-1", k("a"))
    for _ in range(MAX_DELIVERY_ATTEMPTS + 2):
        assert await relay_once(outbox, FakeLink(reachable=False), "q") is False  # type: ignore[arg-type]
    row = await pool.fetchrow("SELECT attempts, parked_at, last_error FROM outbox")
    assert (row["attempts"], row["parked_at"]) == (0, None)
    assert row["last_error"] == "unreachable:connect"

    await drain(outbox, FakeLink())
    assert delivered == [k("a")]


async def test_a_start_nobody_answers_is_given_up_after_the_configured_timeout(
        outbox: OutboxStore, monkeypatch: pytest.MonkeyPatch, pool: asyncpg.Pool) -> None:
    """TOLLGATE_RELAY_SEND_TIMEOUT_S reaches the relay: with a worker polling, a start left
    unanswered (the row's workflow failing on it) ends the try after that many seconds as a
    try of the row's own, not after the built-in 15 s."""
    async def unanswered(*_: Any, **__: Any) -> IntakeAck:
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")

    async def worker_polls(*_: Any) -> None:
        return None

    monkeypatch.setattr(relay.intake, "submit", unanswered)
    monkeypatch.setattr(relay, "why_not_taking", worker_polls)
    policy = RelayPolicy.from_settings(Settings.from_env(
        {"TOLLGATE_RELAY_SEND_TIMEOUT_S": "0.5", "TOLLGATE_RELAY_RATE": "10"}).http)
    assert (policy.send_timeout_s, policy.rate) == (0.5, 10.0)
    await post(outbox, "acme", "C-1", keys("hang")("a"))
    started = time.monotonic()
    assert await relay_once(outbox, FakeLink(), "q", policy) is True  # type: ignore[arg-type]
    assert time.monotonic() - started < 5
    row = await pool.fetchrow("SELECT attempts, last_error, parked_at FROM outbox")
    assert (row["attempts"], row["last_error"], row["parked_at"]) == (1, "TimeoutError", None)


def test_the_send_timeout_defaults_to_15_s_and_refuses_a_bad_value() -> None:
    assert RelayPolicy.from_settings(Settings.from_env({}).http).send_timeout_s == 15.0
    with pytest.raises(ConfigError) as refused:
        Settings.from_env({"TOLLGATE_RELAY_SEND_TIMEOUT_S": "0"})
    assert refused.value.message == "TOLLGATE_RELAY_SEND_TIMEOUT_S must be above 0"
