"""For the review API's tests: the stack they run on, a produced event, a reviewer's token, the
review services, and the list of reviews."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import asyncpg
import httpx
import pytest
from temporalio.testing import WorkflowEnvironment

from adapters.postgres.pool import create_pool
from tests.conftest import TENANT_SECRETS, fresh_key, worker_settings
from tests.eventually import eventually
from tests.http.conftest import http_settings, signed_headers
from tollgate.dev.demo import care_due
from tollgate.dev.standins import StandIns
from tollgate.http.app import create_app
from tollgate.http.deps import Services, TemporalLink
from tollgate.http.ratelimit import TenantRateLimiter
from tollgate.http.relay import relay_once
from tollgate.runtime.identity import issue_dev_token, verifier_from_settings
from tollgate.runtime.workers import draft_worker, main_worker


def review_services(dev_server: WorkflowEnvironment, pool: asyncpg.Pool, database_url: str,
                    tmp_path: Path, queue: str) -> Services:
    """The API's services against the dev server, its runs on ``queue``."""
    address = dev_server.client.service_client.config.target_host
    settings = http_settings(database_url, tmp_path, address, queue)
    return Services(settings=settings, pool=pool, tenant_secrets=TENANT_SECRETS,
                    limiter=TenantRateLimiter(rate=1000, burst=1000),
                    temporal=TemporalLink(address, settings.namespace, settings.env),
                    verifier=verifier_from_settings(settings))


@pytest.fixture
async def stack(dev_server: WorkflowEnvironment, database_url: str, standins: StandIns,
                tmp_path: Path) -> AsyncIterator[tuple[Services, httpx.AsyncClient]]:
    queue = f"tq-{uuid.uuid4().hex[:8]}"
    pool = await create_pool(database_url)
    svc = review_services(dev_server, pool, database_url, tmp_path, queue)
    wsettings = worker_settings(database_url, standins, tmp_path, queue)
    async with main_worker(dev_server.client, wsettings), \
            draft_worker(dev_server.client, wsettings), \
            httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(svc)),
                              base_url="http://tollgate.test") as api:
        yield svc, api
    await pool.close()


def token(svc: Services, reviewer: str = "lan.nguyen", role: str = "care_lead",
          tenant: str = "acme") -> dict[str, str]:
    raw = issue_dev_token(svc.settings.state_dir, reviewer=reviewer, role=role, tenant=tenant)
    return {"Authorization": f"Bearer {raw}"}


async def produce(svc: Services, api: httpx.AsyncClient, standins: StandIns, tenant: str,
                  first_name: str = "Lan") -> str:
    customer = fresh_key("C")
    standins.crm.upsert(tenant, customer, first_name=first_name, pet_name="Miu",
                        consent_messaging=True)
    event = care_due(tenant, customer, fresh_key("k"), now=datetime.now(UTC))
    body = json.dumps(event).encode()
    answer = await api.post("/v1/events", content=body, headers=signed_headers(body, tenant))
    assert answer.status_code == 202, answer.text
    while await relay_once(svc.outbox, svc.temporal, svc.settings.task_queue) is not None:
        pass
    return str(answer.json()["workflow_id"])


async def listed(api: httpx.AsyncClient, headers: dict[str, str], wanted: str) -> list[str]:
    async def reviews() -> list[str]:
        return [r["workflow_id"] for r in (await api.get("/v1/reviews", headers=headers)).json()]

    # The workflow drafts, then visibility follows its upsert.
    return await eventually(reviews, f"{wanted} listed", until=lambda ids: wanted in ids,
                            timeout=20, interval=0.1)
