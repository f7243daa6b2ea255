"""For the tests of the send step's store: a target, an action, a pool, and an event left
executing."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import asyncpg
import pytest

from adapters.ports.targets import TargetWrite
from adapters.postgres.pool import create_pool
from contracts import ActionRequest, EventRef, EventState, StepRecord, Transition
from policies.keys import action_key
from tests.conftest import fresh_key


@pytest.fixture
async def pool(database_url: str) -> AsyncIterator[asyncpg.Pool]:
    pool = await create_pool(database_url, max_size=4)
    yield pool
    await pool.close()


def action() -> ActionRequest:
    # A tenant of its own: switches and rollout modes are per (adapter, tenant).
    tenant, event_id = f"t-{uuid.uuid4().hex[:8]}", fresh_key("evt")
    ref = EventRef(workflow_id=f"event/{tenant}/{event_id}", tenant_id=tenant,
                   event_id=event_id, event_type="CARE_DUE", entity_id="C-1",
                   correlation_id="c", schema_version=3)
    return ActionRequest(ref=ref, adapter="messaging", action="send_message",
                         action_key=action_key(tenant, event_id, "messaging", "send_message"),
                         channel="sms", body="hello", policy_version="v", approved_by="r")


def executing(a: ActionRequest) -> StepRecord:
    return StepRecord(ref=a.ref, policy_version="v", transitions=[Transition(
        seq=9, from_state=EventState.APPROVED, to_state=EventState.EXECUTING, actor="execute",
        reason="receipt opened, calling the target")])


class Target:
    """A target that takes every write (the fence rule is the store's, not the target's)."""

    name, dedupes_by_key, supports_lookup = "messaging", True, True

    def __init__(self) -> None:
        self.calls = 0

    async def execute(self, request: ActionRequest) -> TargetWrite:
        self.calls += 1
        return TargetWrite(idempotency_key=request.action_key, external_id=f"msg-{self.calls}")

    async def lookup(self, idempotency_key: str) -> TargetWrite | None:
        return None
