"""A payload key per tenant: each tenant's histories are sealed with its own key, a tenant's
keys rotate on their own, and removing a tenant's keys makes its histories unreadable while the
other tenants' stay readable (crypto-shredding)."""

from __future__ import annotations

import sys
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest
from temporalio import activity, workflow
from temporalio.api.common.v1 import Payload
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from tests.conftest import fresh_key
from tollgate.codec.keyring import KeyRing, KeyRingError, new_key_ring
from tollgate.codec.payload import (
    KEY_ID_META,
    EncryptionCodec,
    UnknownKeyError,
    encrypted_data_converter,
)

RING = new_key_ring("shared-1", tenants=["acme", "globex"])


@activity.defn
async def greet(name: str) -> str:
    return f"Hi {name}"


@workflow.defn(sandboxed=False)
class Greet:
    @workflow.run
    async def run(self, name: str) -> str:
        return await workflow.execute_activity(greet, name,
                                               start_to_close_timeout=timedelta(seconds=10))


@pytest.fixture(scope="module")
async def client() -> AsyncIterator[Client]:
    path = Path(sys.executable).parent / "temporal-test-server"
    async with await WorkflowEnvironment.start_time_skipping(
        data_converter=encrypted_data_converter(RING), test_server_existing_path=str(path),
    ) as env:
        yield env.client


async def sealed_payloads(client: Client, workflow_id: str, name: str) -> list[Payload]:
    """Runs one workflow for ``name`` and returns every payload its history holds, sealed."""
    queue = f"tq-{uuid.uuid4().hex[:8]}"
    async with Worker(client, task_queue=queue, workflows=[Greet], activities=[greet],
                      workflow_runner=UnsandboxedWorkflowRunner()):
        assert await client.execute_workflow(Greet.run, name, id=workflow_id,
                                             task_queue=queue) == f"Hi {name}"
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    found: list[Payload] = []
    for event in history.events:
        for attrs in ("workflow_execution_started_event_attributes",
                      "activity_task_scheduled_event_attributes",
                      "activity_task_completed_event_attributes",
                      "workflow_execution_completed_event_attributes"):
            if event.HasField(attrs):
                held = getattr(event, attrs)
                box = held.input if hasattr(held, "input") else held.result
                found.extend(box.payloads)
    return found


async def test_removing_a_tenants_key_shreds_its_history_only(client: Client) -> None:
    acme = await sealed_payloads(client, f"event/acme/{fresh_key()}", "Ana Acme")
    globex = await sealed_payloads(client, f"event/globex/{fresh_key()}", "Gus Globex")
    other = await sealed_payloads(client, f"sweep/{uuid.uuid4().hex}", "nobody")
    # Input, activity input and result, workflow result: each under its tenant's key.
    assert len(acme) == 4 and {p.metadata[KEY_ID_META] for p in acme} == {b"acme-1"}
    assert {p.metadata[KEY_ID_META] for p in globex} == {b"globex-1"}
    assert {p.metadata[KEY_ID_META] for p in other} == {b"shared-1"}
    assert all(b"Ana Acme" not in p.SerializeToString() for p in acme)

    shredded = EncryptionCodec(RING.without_tenant("acme"))
    readable = await shredded.decode(globex + other)
    assert b"Gus Globex" in readable[0].data
    for payload in acme:
        with pytest.raises(UnknownKeyError, match="acme-1"):
            await shredded.decode([payload])


async def test_a_tenants_key_rotates_alone_and_its_old_key_still_reads(client: Client) -> None:
    before = await sealed_payloads(client, f"event/acme/{fresh_key()}", "Ana Acme")
    rotated = RING.rotated("acme-2", tenant="acme")
    assert (rotated.active_for("acme"), rotated.active_for("globex"),
            rotated.active_for(None)) == ("acme-2", "globex-1", "shared-1")
    assert b"Ana Acme" in (await EncryptionCodec(rotated).decode(before[:1]))[0].data
    assert KeyRing.parse(rotated.to_json(), "keys.json") == rotated
    with pytest.raises(KeyRingError, match="exists already"):
        rotated.rotated("globex-1", tenant="acme")
    with pytest.raises(KeyRingError, match="no keys of its own"):
        RING.without_tenant("initech")


async def test_the_converter_for_a_tenant_is_made_once_and_seals_with_its_key() -> None:
    from temporalio.converter import (
        ActivitySerializationContext,
        WorkflowSerializationContext,
    )

    base = encrypted_data_converter(RING)

    def run_of(tenant: str) -> WorkflowSerializationContext:
        return WorkflowSerializationContext(namespace="default",
                                            workflow_id=f"event/{tenant}/key-1")

    step = ActivitySerializationContext(
        namespace="default", workflow_id="event/acme/key-1", workflow_type="ProcessEvent",
        activity_type="load_context", activity_task_queue="q", activity_id="1",
        is_local=False)
    acme = base.with_context(run_of("acme"))
    # The SDK asks per task and per payload sequence: the same converter every time.
    assert acme is base.with_context(run_of("acme")) is base.with_context(step)
    globex = base.with_context(run_of("globex"))
    assert globex is not acme
    shared = base.with_context(WorkflowSerializationContext(namespace="default",
                                                            workflow_id="sweep/receipts"))
    assert shared is base
    for converter, key in ((acme, RING.active_for("acme")),
                           (globex, RING.active_for("globex")), (shared, "shared-1")):
        [sealed] = await converter.encode(["hello"])
        assert sealed.metadata[KEY_ID_META].decode() == key
        assert await base.decode([sealed], [str]) == ["hello"]  # by key id, no context needed
