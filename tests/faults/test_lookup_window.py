"""A target's declared lookup window (``TOLLGATE_TARGETS``: ``lookup_window_s``) is how long the
reconciler looks for an unknown write before it decides the write never landed.

Here the target declares 3 s. Without the declaration the same fault waits out the runtime's
10 minutes, which is why no other fault test can let a write stay lost.
"""

from __future__ import annotations

import pytest

from contracts import EventState, ReceiptStatus
from tests.conftest import fresh_key, signed_event
from tests.faults.conftest import Rig, send_key

WINDOW_S = 3.0


@pytest.fixture
def lookup_window_s() -> float:
    return WINDOW_S


async def test_a_write_that_never_landed_stops_after_the_declared_window(rig: Rig) -> None:
    """Fault: the target answers 503 to the send and stores nothing. To a target that does not
    dedupe that is an unknown write; to one that dedupes, an ordinary retry.
    Evidence: no_dedupe: the execute step ended "unknown" carrying the declared window, the
    reconciler's lookups found nothing, the outcome came within 90 s (the default window is
    10 minutes), and the dead letter names the key. dedupe: the send was retried and landed.
    Invariant: no_dedupe: STOPPED, no message, the receipt UNKNOWN beside its dead letter
    (never a resend); dedupe: one message, SUCCEEDED."""
    key = fresh_key("w")
    rig.standins.messaging.inject("unavailable", key=send_key(key))
    ack = await rig.submit(signed_event(rig.customer(), key=key))
    await rig.approve(ack.workflow_id)
    outcome = await rig.outcome(ack.workflow_id, within=90)
    assert rig.faults_left() == []
    if rig.mode == "dedupe":
        assert outcome.state == EventState.SUCCEEDED
        assert (rig.posts(send_key(key)), rig.messages(send_key(key))) == (2, 1)
        return
    [execute] = await rig.attempts(ack.workflow_id, "execute_action")
    assert execute.result["status"] == "unknown"
    assert execute.result["lookup_window"] == "PT3S"  # ISO 8601, as pydantic writes a timedelta
    lookups = await rig.attempts(f"reconcile/{send_key(key)}", "lookup_write")
    assert lookups and all(attempt.result is None for attempt in lookups)
    assert (outcome.state, outcome.reason_code) == (EventState.STOPPED, "unreconciled_write")
    assert (rig.posts(send_key(key)), rig.messages(send_key(key))) == (1, 0)
    [receipt] = await rig.sql("SELECT status FROM receipts WHERE action_key = $1", send_key(key))
    assert receipt["status"] == ReceiptStatus.UNKNOWN
    letters = await rig.sql("SELECT error_code FROM dead_letters WHERE action_key = $1",
                            send_key(key))
    assert [r["error_code"] for r in letters] == ["unreconciled_write"]
