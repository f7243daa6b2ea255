"""Issue 18 item 3: `tollgate dev` comes back with its data. Events wait for review across a
restart; the stand-ins still know the customers and the messages (and their keys)."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Iterator
from datetime import UTC, datetime

import httpx
import pytest

from adapters.broker.cancel import within
from contracts import EventState, FinalOutcome, ReviewDecision
from starter import submit
from tests.stack.devproc import DevProcess, stack_folder
from tollgate.config.settings import Settings
from tollgate.dev.demo import care_due, signed, wait_state
from tollgate.runtime.client import build_client
from tollgate.runtime.identity import issue_dev_token

pytestmark = pytest.mark.e2e


@pytest.fixture
def dev() -> Iterator[DevProcess]:
    with stack_folder() as state_dir:
        stack = DevProcess(state_dir)
        yield stack
        if stack.proc is not None and stack.proc.poll() is None:
            stack.proc.kill()


async def approve(settings: Settings, workflow_id: str) -> FinalOutcome:
    client = await build_client(settings.temporal_address, env=settings.env)
    handle = client.get_workflow_handle(workflow_id, result_type=FinalOutcome)
    await wait_state(client, workflow_id, EventState.AWAITING_REVIEW)
    ticket = await handle.query("review_ticket")
    await handle.execute_update("review", ReviewDecision(
        request_id=ticket["request_id"], decision="approve", reviewer="an.tran", role="care_lead",
        reason="reminder is right", draft_version=ticket["draft_version"], tenant_id="acme",
        # The stack's workers check every decision's token (ADR 0026): one from its dev key.
        token=issue_dev_token(settings.state_dir, reviewer="an.tran", role="care_lead",
                              tenant="acme")))
    return await within(handle.result(), 90)


def stop(dev: DevProcess) -> None:
    assert dev.proc is not None
    dev.proc.send_signal(signal.SIGTERM)
    assert dev.wait_exit() == 0, dev.output()


async def test_a_restart_keeps_waiting_reviews_customers_and_messages(dev: DevProcess) -> None:
    await asyncio.to_thread(dev.start)
    settings = Settings.from_env({"TOLLGATE_STATE_DIR": str(dev.state_dir)})
    assert settings.crm_url and settings.messaging_url
    # A customer added through the CRM's API, not the demo seed: it must survive the restart.
    added = httpx.put(f"{settings.crm_url}/tenants/acme/customers/C-4242",
                      json={"first_name": "Hoa", "pet_name": "Mochi", "consent_messaging": True})
    assert added.status_code == 201
    client = await build_client(settings.temporal_address, env=settings.env)
    now, secrets = datetime.now(UTC), settings.tenant_secrets()
    first = await submit(client, signed(care_due("acme", "C-1001", "restart-a", now=now), secrets),
                         task_queue=settings.task_queue)
    waiting = await submit(client, signed(care_due("acme", "C-4242", "restart-b", now=now),
                                          secrets), task_queue=settings.task_queue)
    sent_before = await approve(settings, first.workflow_id)
    assert sent_before.state == EventState.SUCCEEDED and sent_before.receipt is not None
    await wait_state(client, waiting.workflow_id, EventState.AWAITING_REVIEW)

    await asyncio.to_thread(stop, dev)
    await asyncio.to_thread(dev.start)

    settings = Settings.from_env({"TOLLGATE_STATE_DIR": str(dev.state_dir)})
    assert settings.messaging_url
    key = sent_before.receipt.action_key
    looked_up = httpx.get(f"{settings.messaging_url}/messages/by-key/{key}")
    assert looked_up.status_code == 200
    assert looked_up.json()["id"] == sent_before.receipt.external_id

    outcome = await approve(settings, waiting.workflow_id)
    messages = httpx.get(f"{settings.messaging_url}/messages",
                         params={"tenant_id": "acme"}).json()
    await asyncio.to_thread(stop, dev)

    assert outcome.state == EventState.SUCCEEDED  # consent was read from the kept customer
    assert [m["recipient_ref"] for m in messages] == ["C-1001", "C-4242"]
    assert messages[0]["id"] == sent_before.receipt.external_id
