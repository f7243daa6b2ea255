"""Lease expiry with the worker alive: the send step's heartbeat lease (10 s, renewed by the
worker while the attempt runs) runs out while its write is in flight because the worker process
is frozen, not dead. When it thaws,
the expired attempt and the server's retry both run: a zombie and its successor.

Only against the non-deduping target: there a second send would show as a second message, so
it is the strict mode.
"""

from __future__ import annotations

import signal

import pytest

from contracts import EventState
from tests.conftest import fresh_key, signed_event
from tests.eventually import eventually
from tests.faults.conftest import Rig, failure_message, send_key
from tests.faults.process_faults_support import (
    WorkerProcess,
    process_rig,  # noqa: F401 - a fixture
)


@pytest.mark.parametrize("target_mode", ["no_dedupe"], indirect=True)
async def test_lease_expires_while_the_write_is_in_flight_and_the_zombie_cannot_resend(
    process_rig: tuple[Rig, WorkerProcess],  # noqa: F811
) -> None:
    """Fault: the target stores the message and holds its answer; the worker is frozen
    (SIGSTOP) with the call in flight until the server expires the attempt's lease, then thawed.
    Evidence: the message was stored before the freeze; the server scheduled a second attempt
    of the send step after a timeout while the first was still frozen.
    Invariant: the thawed first attempt and the retry together make one POST and one message;
    SUCCEEDED with a SUCCEEDED receipt holding the target's id."""
    rig, proc = process_rig
    key = fresh_key("l")
    ack = await rig.submit(signed_event(rig.customer(), key=key))
    rig.standins.messaging.inject("hang_after_write", key=send_key(key), ms=3000)
    await rig.approve(ack.workflow_id)
    await eventually(lambda: rig.messages(send_key(key)) == 1, "the message stored at the target")
    assert proc.proc is not None
    proc.proc.send_signal(signal.SIGSTOP)
    handle = rig.client.get_workflow_handle(ack.workflow_id)

    async def lease_expired() -> bool:
        pending = (await handle.describe()).raw_description.pending_activities
        for p in pending:
            if p.activity_type.name == "execute_action" and p.attempt >= 2:
                return "timeout" in (await failure_message(rig.client, p.last_failure)).lower()
        return False

    try:
        await eventually(lease_expired, "the send step's lease expired", timeout=60)
    finally:
        proc.proc.send_signal(signal.SIGCONT)
    outcome = await rig.outcome(ack.workflow_id, within=90)
    assert outcome.state == EventState.SUCCEEDED
    assert outcome.receipt is not None
    held = rig.standins.messaging.get_by_key(send_key(key))
    assert held is not None and outcome.receipt.external_id == held["id"]
    assert (rig.posts(send_key(key)), rig.messages(send_key(key))) == (1, 1)
