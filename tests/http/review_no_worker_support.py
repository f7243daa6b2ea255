"""For the tests of a review API without a worker: an API with a review waiting."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
from temporalio.testing import WorkflowEnvironment

from adapters.postgres.pool import create_pool
from tests.conftest import worker_settings
from tests.http.review_handshake_support import listed_ticket
from tests.http.reviews_support import produce, review_services, token
from tollgate.dev.standins import StandIns
from tollgate.http.app import create_app
from tollgate.runtime.workers import draft_worker, main_worker


@contextlib.asynccontextmanager
async def api_with_a_waiting_review(
        dev_server: WorkflowEnvironment, database_url: str, standins: StandIns,
        tmp_path: Path) -> AsyncIterator[tuple[httpx.AsyncClient, dict[str, str], str,
                                               dict[str, Any]]]:
    """The review API over ``dev_server`` with one acme review waiting in it, listed, and its
    workers gone: (the API, a reviewer's headers, the run's workflow id, its listed ticket)."""
    queue = f"tq-{uuid.uuid4().hex[:8]}"
    pool = await create_pool(database_url)
    svc = review_services(dev_server, pool, database_url, tmp_path, queue)
    wsettings = worker_settings(database_url, standins, tmp_path, queue)
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(svc)),
                                     base_url="http://tollgate.test") as api:
            lan = token(svc)
            async with main_worker(dev_server.client, wsettings), \
                    draft_worker(dev_server.client, wsettings):
                mine = await produce(svc, api, standins, "acme")
                ticket = await listed_ticket(api, lan, mine)
            yield api, lan, mine, ticket
    finally:
        await pool.close()
