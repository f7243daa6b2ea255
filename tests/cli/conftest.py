"""Fixtures of the CLI tests."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from temporalio.testing import WorkflowEnvironment

from adapters.postgres.ops import OpsStore
from adapters.postgres.pool import create_pool
from adapters.postgres.receipts import ReceiptStore
from tests.pg_databases import fresh_database


@pytest.fixture
def temporal(env: WorkflowEnvironment) -> str:
    """A Temporal that answers (the time-skipping test server, which does not implement the
    task queue question, so the screen's probe says ``workers: ok``): with Temporal
    unreachable, open events alone need a human (tests/cli/test_status_workers.py)."""
    return env.client.service_client.config.target_host


@pytest.fixture
async def fresh(pg_server: str) -> AsyncIterator[tuple[str, ReceiptStore, OpsStore]]:
    """A database of the test's own, so ``ops status`` and the sweep count only its rows: its
    URL and the receipt and ops stores on it."""
    url = await fresh_database(pg_server)
    pool = await create_pool(url, max_size=2)
    yield url, ReceiptStore(pool), OpsStore(pool)
    await pool.close()
