"""The seed's named fixtures that the other fault files do not already prove: out-of-order,
clock skew, schema drift and consent revoked between approval and send (docs/fixtures.md).
Each runs against both target modes (``rig``), like every fault test."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from contracts import EventState
from tests.conftest import signed_event
from tests.faults.conftest import Rig, send_key
from tests.faults.rollout_support import TRANSITIONS_SQL, stopped_after_executing


def key(name: str) -> str:
    return f"{name}-{datetime.now(UTC):%H%M%S%f}"


async def test_an_older_event_after_a_newer_one_is_superseded_and_sends_nothing(rig: Rig) -> None:
    """Fault: out-of-order delivery: an event for a customer arrives after a newer one for the
    same customer was admitted.
    Evidence: the intake gate's transition reason names the newer event; the older one never
    reaches a draft.
    Invariant: SUPERSEDED, no receipt, no POST for its key."""
    customer = rig.customer()
    now = datetime.now(UTC)
    newer = await rig.submit(signed_event(customer, key=key("new"), occurred_at=now.isoformat()))
    old_key = key("old")
    older_raw = signed_event(customer, key=old_key,
                             occurred_at=(now - timedelta(hours=1)).isoformat())
    older = await rig.submit(older_raw)
    assert newer.status == "accepted"
    outcome = await rig.outcome(older.workflow_id)
    assert outcome.state == EventState.SUPERSEDED and outcome.receipt is None
    reasons = [r["reason"] for r in await rig.sql(
        "SELECT reason FROM state_transitions WHERE workflow_id = $1 ORDER BY seq",
        older.workflow_id)]
    assert "newer event for this entity already admitted" in reasons
    assert await rig.sql("SELECT 1 FROM drafts WHERE workflow_id = $1", older.workflow_id) == []
    assert rig.posts(send_key(old_key)) == 0


async def test_an_event_from_a_clock_far_ahead_is_quarantined(rig: Rig) -> None:
    """Fault: clock skew: the producer's clock runs ten minutes ahead of ours (the allowed skew
    is five).
    Evidence: the producer is answered invalid with reason clock_skew; a quarantine row holds it.
    Invariant: QUARANTINED, no events row, nothing sent."""
    ahead = (datetime.now(UTC) + timedelta(minutes=10)).isoformat()
    ack = await rig.submit(signed_event(rig.customer(), key=key("skew"), occurred_at=ahead))
    assert (ack.status, ack.reason_code) == ("invalid", "clock_skew")
    rows = await rig.sql("SELECT reason_code FROM quarantine WHERE workflow_id = $1",
                         ack.workflow_id)
    assert [r["reason_code"] for r in rows] == ["clock_skew"]
    assert await rig.sql("SELECT 1 FROM events WHERE workflow_id = $1", ack.workflow_id) == []


async def test_a_retired_schema_version_is_dead_lettered_with_a_replay_plan(rig: Rig) -> None:
    """Fault: schema drift: a producer still sends CARE_DUE v2, a version the registry retired.
    Evidence: a dead letter with code schema_drift, its redacted payload and a replay plan.
    Invariant: DEAD_LETTERED, no draft, nothing sent."""
    ack = await rig.submit(signed_event(rig.customer(), key=key("drift"), version=2))
    outcome = await rig.outcome(ack.workflow_id)
    assert outcome.state == EventState.DEAD_LETTERED
    rows = await rig.sql("SELECT error_code, replay_plan, status FROM dead_letters"
                         " WHERE workflow_id = $1", ack.workflow_id)
    assert [(r["error_code"], r["status"]) for r in rows] == [("schema_drift", "OPEN")]
    assert rows[0]["replay_plan"]
    assert await rig.sql("SELECT 1 FROM drafts WHERE workflow_id = $1", ack.workflow_id) == []


async def test_consent_revoked_after_approval_stops_the_send(rig: Rig) -> None:
    """Fault: revoked consent: the customer withdraws consent while the draft waits for review;
    the reviewer approves without knowing.
    Evidence: the context step saw consent (the event reached review); the execute step read the
    source of truth again and stopped with no_consent_at_send.
    Invariant: STOPPED, no POST, no message; the send step's EXECUTING is recorded before it,
    so the transitions have no gap."""
    customer, event_key = rig.customer(), key("consent")
    ack = await rig.submit(signed_event(customer, key=event_key))
    await rig.wait_review(ack.workflow_id)
    rig.standins.crm.set_consent("acme", customer, False)
    await rig.approve(ack.workflow_id)
    outcome = await rig.outcome(ack.workflow_id)
    assert (outcome.state, outcome.reason_code) == (EventState.STOPPED, "no_consent_at_send")
    stopped_after_executing(await rig.sql(TRANSITIONS_SQL, ack.workflow_id))
    assert (rig.posts(send_key(event_key)), rig.messages(send_key(event_key))) == (0, 0)
