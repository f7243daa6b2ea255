"""SIGTERM to a busy worker process (issue 13, item 1): it stops polling, lets the sends in
flight finish within the drain, exits 0, and every event ends once after a fresh worker takes
over. Run against a target that does not dedupe, so a second send would be a second message."""

from __future__ import annotations

import asyncio
import signal
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from contracts import EventState
from tests.conftest import signed_event
from tests.deploy.conftest import NO_DEDUPE_TARGETS
from tests.eventually import eventually
from tests.faults.conftest import Rig, send_key
from tests.faults.process_faults_support import WorkerProcess, new_key, worker_process
from tests.ports import free_port


@pytest.fixture
def busy_worker(rig: Rig, tmp_path: Path) -> Iterator[tuple[Rig, WorkerProcess, int]]:
    health = free_port()
    with worker_process(rig, tmp_path, "term", TOLLGATE_TARGETS=NO_DEDUPE_TARGETS,
                        TOLLGATE_DRAIN_SECONDS="20", TOLLGATE_HEALTH_PORT=str(health)) as proc:
        yield rig, proc, health


def probe(port: int, path: str) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return 0


async def test_sigterm_to_a_busy_worker_finishes_every_send_once(
    busy_worker: tuple[Rig, WorkerProcess, int],
) -> None:
    rig, proc, health = busy_worker
    await eventually(lambda: probe(health, "/readyz") == 200, "the worker ready", timeout=60)
    assert probe(health, "/livez") == 200
    keys = [new_key() for _ in range(3)]
    acks = [await rig.submit(signed_event(rig.customer(), key=key)) for key in keys]
    for key, ack in zip(keys, acks, strict=True):
        await rig.wait_review(ack.workflow_id)
        # Each send is held inside its POST, so the stop lands on activities in flight.
        rig.standins.messaging.inject("delay", key=send_key(key), ms=3000)
        await rig.approve(ack.workflow_id)
    await eventually(lambda: all(rig.posts(send_key(k)) == 1 for k in keys),
                     "every send inside its POST")
    assert proc.proc is not None
    proc.proc.send_signal(signal.SIGTERM)
    code = await asyncio.to_thread(proc.proc.wait, 30)
    assert code == 0
    # The drain let every send finish on the stopping worker: nothing was retried.
    assert all(rig.messages(send_key(k)) == 1 for k in keys)
    proc.start()  # a fresh worker finishes the workflows
    for key, ack in zip(keys, acks, strict=True):
        outcome = await rig.outcome(ack.workflow_id, within=60)
        [execute] = await rig.attempts(ack.workflow_id, "execute_action")
        assert execute.attempt == 1
        assert outcome.state == EventState.SUCCEEDED
        assert (rig.posts(send_key(key)), rig.messages(send_key(key))) == (1, 1)
