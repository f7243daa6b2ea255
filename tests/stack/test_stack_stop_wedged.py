"""Stops stay stops (issue 25, item 5): with the relay retrying a row whose workflow step fails
on every try (its quarantine insert refused), SIGTERM still stops `tollgate dev` within the
drain window plus the time the stack's servers take to stop."""

from __future__ import annotations

import asyncio
import json
import signal
import time
import urllib.error
import urllib.request
from collections.abc import Iterator

import asyncpg
import pytest

from tests.eventually import eventually
from tests.stack.devproc import DevProcess, stack_folder
from tollgate.dev.run import WORKER_DRAIN
from tollgate.http.webhook_auth import body_signature
from tollgate.runtime.health import STOP_MARGIN_S

pytestmark = pytest.mark.e2e

#: Stand-ins, Temporal and PostgreSQL stopping after the workers (not the part under test).
SERVERS_STOP_S = 30.0


@pytest.fixture
def dev() -> Iterator[DevProcess]:
    with stack_folder() as state_dir:
        stack = DevProcess(state_dir)
        yield stack
        if stack.proc is not None and stack.proc.poll() is None:
            stack.proc.kill()


def post_invalid_event(dev: DevProcess) -> None:
    secret = json.loads((dev.state_dir / "tenants.json").read_text())["acme"]
    body = json.dumps({"tenant_id": "acme", "idempotency_key": "wedge-1",
                       "entity_id": "C-1001"}).encode()
    stamp = str(int(time.time()))
    request = urllib.request.Request(
        f"http://127.0.0.1:{dev.ports['HTTP']}/v1/events", data=body, method="POST",
        headers={"X-Tollgate-Tenant": "acme", "X-Tollgate-Timestamp": stamp,
                 "X-Tollgate-Signature": body_signature(secret, stamp, body),
                 "Content-Type": "application/json"})
    try:
        urllib.request.urlopen(request, timeout=10)  # noqa: S310 - our own loopback service
    except urllib.error.HTTPError as answer:
        assert answer.code == 422  # refused: its workflow will quarantine it


async def wedge_and_wait_for_retries(dev: DevProcess) -> None:
    url = json.loads((dev.state_dir / "endpoints.json").read_text())["database_url"]
    conn = await asyncpg.connect(url)
    try:
        # Every quarantine insert now fails: the step retries without end, as with issue 25's NUL.
        await conn.execute("ALTER TABLE quarantine ADD CONSTRAINT wedge CHECK (false) NOT VALID")
        await asyncio.to_thread(post_invalid_event, dev)
        async def tries() -> int:
            return int(await conn.fetchval(
                "SELECT coalesce(max(attempts), 0) FROM outbox WHERE sent_at IS NULL"))

        def retried(n: int) -> bool:
            return n >= 1

        await eventually(tries, "the relay retrying the row", until=retried, timeout=120,
                         interval=0.5)
    finally:
        await conn.close()


def test_sigterm_stops_the_stack_while_a_step_retries_for_ever(dev: DevProcess) -> None:
    dev.start()
    asyncio.run(wedge_and_wait_for_retries(dev))
    assert dev.proc is not None
    started = time.monotonic()
    dev.proc.send_signal(signal.SIGTERM)
    window = WORKER_DRAIN.total_seconds() + 2 * STOP_MARGIN_S + SERVERS_STOP_S
    assert dev.wait_exit(within=window) == 0, dev.output()
    assert time.monotonic() - started < window
