"""The HTTP service in-process (httpx over ASGI), on a fresh database per module."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from adapters.postgres.pool import create_pool
from tests.conftest import TENANT_SECRETS, TEST_KEYS_FILE
from tollgate.config.settings import Settings
from tollgate.http import review_service as rs
from tollgate.http.app import create_app
from tollgate.http.deps import Services, TemporalLink
from tollgate.http.ratelimit import TenantRateLimiter
from tollgate.http.webhook_auth import body_signature
from tollgate.runtime.identity import verifier_from_settings


def http_settings(database_url: str, state_dir: Path, temporal_address: str = "127.0.0.1:1",
                  queue: str = "tollgate", **extra: str) -> Settings:
    (state_dir / "tenants.json").write_text(json.dumps(TENANT_SECRETS))
    return Settings.from_env({
        "DATABASE_URL": database_url, "TOLLGATE_STATE_DIR": str(state_dir),
        "TOLLGATE_TENANTS_FILE": str(state_dir / "tenants.json"),
        "TEMPORAL_ADDRESS": temporal_address, "TOLLGATE_TASK_QUEUE": queue,
        "TOLLGATE_KEYS_FILE": str(TEST_KEYS_FILE), **extra,
    })


@pytest.fixture(scope="module")
async def http_services(database_url: str, tmp_path_factory: pytest.TempPathFactory
                        ) -> AsyncIterator[Services]:
    settings = http_settings(database_url, tmp_path_factory.mktemp("http"))
    pool = await create_pool(database_url)
    yield Services(settings=settings, pool=pool, tenant_secrets=TENANT_SECRETS,
                   limiter=TenantRateLimiter(rate=1000, burst=1000),
                   temporal=TemporalLink(settings.temporal_address, settings.namespace,
                                         settings.env),
                   verifier=verifier_from_settings(settings), max_body=200_000)
    await pool.close()


@pytest.fixture
async def api(http_services: Services) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(http_services)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://tollgate.test") as client:
        yield client


def signed_headers(body: bytes, tenant: str = "acme", *, secret: str | None = None,
                   ts: int | None = None) -> dict[str, str]:
    stamp = str(int(time.time()) if ts is None else ts)
    key = secret if secret is not None else TENANT_SECRETS[tenant]
    return {"X-Tollgate-Tenant": tenant, "X-Tollgate-Timestamp": stamp,
            "X-Tollgate-Signature": body_signature(key, stamp, body),
            "Content-Type": "application/json"}


async def post_events(api: httpx.AsyncClient, body: Any, tenant: str = "acme",
                      **kw: Any) -> httpx.Response:
    raw = body if isinstance(body, bytes) else (
        body.encode() if isinstance(body, str) else json.dumps(body).encode())
    return await api.post("/v1/events", content=raw, headers=signed_headers(raw, tenant, **kw))


@pytest.fixture
def decided(monkeypatch: pytest.MonkeyPatch) -> list[rs.DecisionIn]:
    """The decisions that reached the review service (none may, in these tests)."""
    made: list[rs.DecisionIn] = []

    async def decide(svc: Services, who: object, workflow_id: str,
                     body: rs.DecisionIn) -> rs.DecisionOut:
        made.append(body)
        return rs.DecisionOut(accepted=True, state="APPROVED", message="approved")

    monkeypatch.setattr(rs, "decide", decide)
    return made
