"""For the HTTP intake tests: an event to post, and the outbox rows it left."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import asyncpg

from tests.conftest import fresh_key
from tollgate.dev.demo import care_due
from tollgate.http.deps import Services


def event(tenant: str = "acme", key: str | None = None, **overrides: Any) -> dict[str, Any]:
    key = key or fresh_key("k")
    return {**care_due(tenant, "C-1001", key, now=datetime.now(UTC)), **overrides}


async def outbox_rows(svc: Services, workflow_id: str) -> list[asyncpg.Record]:
    return await svc.pool.fetch("SELECT * FROM outbox WHERE workflow_id = $1", workflow_id)
