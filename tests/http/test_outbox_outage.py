"""Nothing lost while Temporal is down: the real dev server is stopped, 200 events are posted to
the running HTTP service, the server comes back, and exactly 200 workflows start, each once."""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path

import asyncpg
import httpx
import pytest
from temporalio.client import Client

from tests.conftest import TEST_KEYS, worker_settings
from tests.eventually import eventually
from tests.http.conftest import http_settings, signed_headers
from tests.ports import free_port
from tollgate.dev.demo import care_due
from tollgate.dev.stack_config import SPEED_ARGS, search_attribute_args
from tollgate.dev.standins import StandIns
from tollgate.http.app import serve
from tollgate.runtime.client import build_client
from tollgate.runtime.workers import draft_worker, main_worker

pytestmark = pytest.mark.e2e

#: Waiting limits, not assertions on speed: a slow machine only makes the test slower.
START_WAIT_S = 60
DRAIN_WAIT_S = 600


class DevServer:
    """A Temporal dev server we can stop and start again on the same port and SQLite file."""

    def __init__(self, state: Path) -> None:
        self.port, self.state = free_port(), state
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    async def start(self) -> Client:
        binary = str(Path(sys.executable).parent / "temporal")
        self.proc = subprocess.Popen(  # noqa: S603 - our own binary, fixed arguments
            [binary, "server", "start-dev", "--ip", "127.0.0.1", "--port", str(self.port),
             "--headless", "--db-filename", str(self.state / "temporal.db"),
             *SPEED_ARGS, "--log-level", "error", *search_attribute_args()],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return await eventually(lambda: build_client(self.address, keys=TEST_KEYS),
                                "the Temporal dev server up", timeout=START_WAIT_S,
                                interval=0.25, ignoring=(RuntimeError,))

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(30)
            self.proc = None


@pytest.fixture
def temporal(tmp_path: Path) -> Iterator[DevServer]:
    server = DevServer(tmp_path)
    yield server
    server.stop()


@contextlib.asynccontextmanager
async def running_worker(client: Client, settings_dir: Path, database_url: str,
                         standins: StandIns, queue: str) -> AsyncIterator[None]:
    settings = worker_settings(database_url, standins, settings_dir, queue)
    async with main_worker(client, settings), draft_worker(client, settings):
        yield


async def post(api: httpx.AsyncClient, key: str) -> int:
    event = care_due("acme", "C-1001", key, now=datetime.now(UTC))
    body = json.dumps(event).encode()
    return (await api.post("/v1/events", content=body, headers=signed_headers(body))).status_code


async def backlog(database_url: str) -> int:
    conn = await asyncpg.connect(database_url)
    try:
        return int(await conn.fetchval("SELECT count(*) FROM outbox WHERE sent_at IS NULL"))
    finally:
        await conn.close()


async def drained(database_url: str) -> None:
    await eventually(lambda: backlog(database_url), "the relay draining the outbox",
                     until=lambda left: left == 0, timeout=DRAIN_WAIT_S, interval=0.5)


async def test_outage_loses_nothing_and_doubles_nothing(
    temporal: DevServer, database_url: str, standins: StandIns, tmp_path: Path,
) -> None:
    queue, prefix = f"tq-{uuid.uuid4().hex[:8]}", f"outage-{uuid.uuid4().hex[:6]}"
    # The relay unpaced (TOLLGATE_RELAY_RATE): the 200 rows are one customer's, so they go one
    # at a time whatever the rate, and the default 50 rows/s only added its pause to each.
    settings = http_settings(database_url, tmp_path, temporal.address, queue,
                             TOLLGATE_INTAKE_BURST="1000", TOLLGATE_RELAY_RATE="1000")
    port = free_port()
    client = await temporal.start()
    service = asyncio.create_task(serve(settings, "127.0.0.1", port))
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as api:
        await eventually(lambda: api.get("/healthz"), "the service answering on its port",
                         until=lambda r: r.status_code == 200, timeout=20, interval=0.1,
                         ignoring=(httpx.TransportError,))
        async with running_worker(client, tmp_path, database_url, standins, queue):
            assert await post(api, f"{prefix}-before") == 202
            await drained(database_url)
        temporal.stop()

        # One after another, as a producer's queue would: each event is newer than the last
        # for the same customer, so any reordering by the relay would show as SUPERSEDED.
        codes = [await post(api, f"{prefix}-{i:03d}") for i in range(200)]
        assert codes == [202] * 200  # answered while Temporal is down
        assert await backlog(database_url) == 200

        client = await temporal.start()
        async with running_worker(client, tmp_path, database_url, standins, queue):
            await drained(database_url)
    service.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await service

    async def listed_runs() -> list[str]:
        return [wf.id async for wf in client.list_workflows(
            f"WorkflowId STARTS_WITH 'event/acme/{prefix}-'")]

    # Visibility catches up a moment after the starts.
    runs = await eventually(listed_runs, "201 runs listed", until=lambda r: len(r) >= 201,
                            timeout=20, interval=0.2)
    assert len(runs) == 201 and len(set(runs)) == 201  # every event once, none twice
    conn = await asyncpg.connect(database_url)
    try:
        acks = await conn.fetch("SELECT ack_status, count(*) FROM outbox GROUP BY ack_status")
    finally:
        await conn.close()
    assert {r["ack_status"]: r["count"] for r in acks} == {"accepted": 201}
