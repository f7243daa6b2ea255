"""A producer's delivery is asked again while Temporal is busy with the same workflow, and each
retry is the same update, so a retry of an update the workflow already took cannot turn into a
second delivery. (The real server's side is in tests/faults/test_delivery_faults.py: 50 copies.)"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from temporalio.service import RPCError, RPCStatusCode

from contracts import EventState, IntakeAck
from tollgate.intake import submit as intake


class Busy:
    """Answers ``failures`` with the given status, then accepts; records each update id."""

    def __init__(self, *failures: RPCStatusCode) -> None:
        self.failures = list(failures)
        self.ids: list[str] = []

    async def execute_update_with_start_workflow(self, *_: Any, **kwargs: Any) -> IntakeAck:
        self.ids.append(kwargs["id"])
        if self.failures:
            status = self.failures.pop(0)
            raise RPCError("workflow update was aborted", status, b"")
        return IntakeAck(status="accepted", workflow_id="event/acme/k-1",
                         state=EventState.RECEIVED)


@pytest.fixture(autouse=True)
def no_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(intake, "BUSY_BACKOFF_S", 0.0)


RAW = '{"tenant_id": "acme", "idempotency_key": "k-1"}'


async def test_an_aborted_or_refused_update_is_asked_again_under_the_same_update_id() -> None:
    client = Busy(RPCStatusCode.RESOURCE_EXHAUSTED, RPCStatusCode.UNAVAILABLE)
    ack = await intake.submit(client, RAW, task_queue="q")  # type: ignore[arg-type]
    assert ack.status == "accepted"
    assert len(client.ids) == 3 and len(set(client.ids)) == 1


async def test_two_deliveries_are_two_updates() -> None:
    client = Busy()
    await intake.submit(client, RAW, task_queue="q")  # type: ignore[arg-type]
    await intake.submit(client, RAW, task_queue="q")  # type: ignore[arg-type]
    assert len(set(client.ids)) == 2


async def test_another_failure_is_not_retried() -> None:
    client = Busy(RPCStatusCode.INVALID_ARGUMENT)
    with pytest.raises(RPCError):
        await intake.submit(client, RAW, task_queue="q")  # type: ignore[arg-type]
    assert len(client.ids) == 1


async def test_a_server_that_stays_busy_fails_the_delivery_once_patience_is_spent(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(intake, "BUSY_PATIENCE_S", 0.2)
    monkeypatch.setattr(intake, "BUSY_BACKOFF_S", 0.01)
    client = Busy(*[RPCStatusCode.UNAVAILABLE] * 10_000)
    with pytest.raises(RPCError):
        await intake.submit(client, RAW, task_queue="q")  # type: ignore[arg-type]
    assert 2 <= len(client.ids) < 10_000 and len(set(client.ids)) == 1


class Counting(Busy):
    """Holds each update a moment and records the most held at once."""

    def __init__(self) -> None:
        super().__init__()
        self.held = self.most = 0

    async def execute_update_with_start_workflow(self, *args: Any, **kwargs: Any) -> IntakeAck:
        self.held += 1
        self.most = max(self.most, self.held)
        await asyncio.sleep(0.01)
        self.held -= 1
        return await super().execute_update_with_start_workflow(*args, **kwargs)


async def test_a_crowd_of_copies_is_offered_to_the_server_a_few_at_a_time() -> None:
    """The server aborts a workflow's waiting updates when more than 10 arrive at once."""
    client = Counting()
    acks = await asyncio.gather(*(intake.submit(client, RAW, task_queue="q")  # type: ignore[arg-type]
                                  for _ in range(40)))
    assert len(acks) == 40 and len(set(client.ids)) == 40
    assert client.most == intake.LANE_WIDTH
    assert intake._lanes == {}  # nothing kept once the crowd is through
