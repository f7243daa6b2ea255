"""Stops stay stops (issue 25, item 5): with the relay retrying a row whose workflow step fails
on every try (its quarantine insert refused), SIGTERM still stops `tollgate dev` within the
drain window plus the time the stack's servers take to stop.

The row is recorded through the outbox store itself, as the HTTP intake records an invalid
event: the edge now refuses the NUL that first wedged the relay before it reaches the outbox,
and recording it here keeps the test from racing the HTTP service's start."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from collections.abc import Iterator
from datetime import UTC, datetime

import asyncpg
import pytest

from adapters.postgres.outbox import OutboxStore
from policies.keys import payload_fingerprint, quarantine_workflow_id
from tests.eventually import eventually
from tests.stack.devproc import DevProcess, stack_folder
from tollgate.runtime.health import STOP_MARGIN_S

pytestmark = pytest.mark.e2e

#: Stand-ins, Temporal and PostgreSQL stopping after the workers (not the part under test).
SERVERS_STOP_S = 30.0
#: The stack's drain window (TOLLGATE_DRAIN_SECONDS): shorter than the default 10 s, since
#: this test waits it out whole; the stop must still come within it plus the margins.
DRAIN_S = 2.0
#: The relay's wait for the wedged row's start (TOLLGATE_RELAY_SEND_TIMEOUT_S): its first try
#: ending is how the test knows the wedge is in place, and the default 15 s was waited out whole.
SEND_TIMEOUT_S = 2.0


@pytest.fixture
def dev(monkeypatch: pytest.MonkeyPatch) -> Iterator[DevProcess]:
    monkeypatch.setenv("TOLLGATE_DRAIN_SECONDS", str(DRAIN_S))  # DevProcess passes it on
    monkeypatch.setenv("TOLLGATE_RELAY_SEND_TIMEOUT_S", str(SEND_TIMEOUT_S))
    with stack_folder() as state_dir:
        stack = DevProcess(state_dir)
        yield stack
        if stack.proc is not None and stack.proc.poll() is None:
            stack.proc.kill()


async def record_invalid_event(url: str) -> None:
    """An unsigned envelope missing its fields, kept for the workflow to quarantine."""
    raw = json.dumps({"tenant_id": "acme", "idempotency_key": "wedge-1",
                      "entity_id": "C-1001"})
    pool = await asyncpg.create_pool(url, min_size=1, max_size=1)
    try:
        found = await OutboxStore(pool).record(
            workflow_id="event/acme/wedge-1", conflict_workflow_id=quarantine_workflow_id(raw),
            tenant_id="acme", fingerprint=payload_fingerprint(raw), status="invalid",
            reason_code="bad_envelope", raw=raw, received_at=datetime.now(UTC))
    finally:
        await pool.close()
    assert found.kind == "new"


async def wedge_and_wait_for_retries(dev: DevProcess) -> None:
    url = json.loads((dev.state_dir / "endpoints.json").read_text())["database_url"]
    conn = await asyncpg.connect(url)
    try:
        # Every quarantine insert now fails: the step retries without end, as with issue 25's NUL.
        await conn.execute("ALTER TABLE quarantine ADD CONSTRAINT wedge CHECK (false) NOT VALID")
        await record_invalid_event(url)

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
    window = DRAIN_S + 2 * STOP_MARGIN_S + SERVERS_STOP_S
    assert dev.wait_exit(within=window) == 0, dev.output()
    assert time.monotonic() - started < window
