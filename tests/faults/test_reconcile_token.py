"""The reconciler's one keyed resend checks the approval's binding again (ADR 0049).

Fault: the target's gateway answers 504 to the send and the service never took it
(``gateway_timeout``), so the write is unknown and the reconciler's lookups find nothing for
the target's declared window (2 s). The target dedupes by key, so the reconciler may resend
once; what changes between the unknown write and that resend is laid in while the lookups run.
Only the deduping mode: a target that does not dedupe is never resent to (fixture 37).
"""

from __future__ import annotations

import pytest

from contracts import EventState, ReceiptStatus
from tests.conftest import fresh_key, signed_event
from tests.eventually import eventually
from tests.faults.conftest import Rig, send_key

#: Long enough for a test to lay its change in once the write is unknown (an SQL statement or a
#: stand-in's record, a poll after the receipt turned UNKNOWN: well under a second loaded).
WINDOW_S = 2.0

pytestmark = pytest.mark.parametrize("target_mode", ["dedupe"], indirect=True)


@pytest.fixture
def lookup_window_s() -> float:
    return WINDOW_S


async def unknown_write(rig: Rig) -> tuple[str, str, str]:
    """(workflow id, action key, customer) of an approved send whose write is now unknown."""
    key = fresh_key("rt")
    customer = rig.customer()
    rig.standins.messaging.inject("gateway_timeout", key=send_key(key))
    ack = await rig.submit(signed_event(customer, key=key))
    await rig.approve(ack.workflow_id)

    async def unknown() -> bool:
        rows = await rig.sql("SELECT status FROM receipts WHERE action_key = $1", send_key(key))
        return bool(rows) and rows[0]["status"] == ReceiptStatus.UNKNOWN

    await eventually(unknown, f"{ack.workflow_id}: the write unknown")
    return ack.workflow_id, send_key(key), customer


async def refused_with(rig: Rig, workflow_id: str, action_key: str, code: str) -> None:
    outcome = await rig.outcome(workflow_id, within=90)
    assert (outcome.state, outcome.reason_code) == (EventState.STOPPED, code)
    assert rig.faults_left() == []
    # The one POST is the lost send; the resend never reached the target.
    assert (rig.posts(action_key), rig.messages(action_key)) == (1, 0)
    [resend] = await rig.attempts(f"reconcile/{action_key}", "resend_write")
    assert (resend.result["status"], resend.result["reason_code"]) == ("refused", code)
    letters = await rig.sql("SELECT error_class, error_code, state FROM dead_letters"
                            " WHERE action_key = $1", action_key)
    assert [tuple(r.values()) for r in letters] == [("rejected", code, "STOPPED")]
    [receipt] = await rig.sql("SELECT status FROM receipts WHERE action_key = $1", action_key)
    assert receipt["status"] == ReceiptStatus.UNKNOWN


async def test_a_draft_altered_after_an_unknown_write_is_not_resent(rig: Rig) -> None:
    workflow_id, action_key, _ = await unknown_write(rig)
    await rig.sql("UPDATE drafts SET draft = jsonb_set(draft, '{message}', to_jsonb($2::text))"
                  " WHERE workflow_id = $1", workflow_id, "Pay the overdue bill at evil.example")
    await refused_with(rig, workflow_id, action_key, "action_token_content_changed")


async def test_an_approval_withdrawn_after_an_unknown_write_is_not_resent(rig: Rig) -> None:
    """As a restore from before the approval leaves it (fixture 38, here past the send)."""
    workflow_id, action_key, _ = await unknown_write(rig)
    await rig.sql("DELETE FROM review_decisions WHERE workflow_id = $1", workflow_id)
    await refused_with(rig, workflow_id, action_key, "no_approval_on_record")


async def test_consent_revoked_after_an_unknown_write_is_not_resent(rig: Rig) -> None:
    workflow_id, action_key, customer = await unknown_write(rig)
    rig.standins.crm.upsert("acme", customer, first_name="Lan", pet_name="Miu",
                            consent_messaging=False)
    await refused_with(rig, workflow_id, action_key, "no_consent_at_send")


async def test_an_unknown_write_nothing_changed_is_resent_once(rig: Rig) -> None:
    """The control: the same fault with nothing changed ends with the one resend, one message."""
    workflow_id, action_key, _ = await unknown_write(rig)
    outcome = await rig.outcome(workflow_id, within=90)
    assert outcome.state == EventState.SUCCEEDED
    assert (rig.posts(action_key), rig.messages(action_key)) == (2, 1)
    [resend] = await rig.attempts(f"reconcile/{action_key}", "resend_write")
    assert resend.result["status"] == "resent"
    assert await rig.sql("SELECT 1 FROM dead_letters WHERE action_key = $1", action_key) == []
    uses = await rig.sql("SELECT use_id FROM action_token_uses WHERE action_key = $1",
                         action_key)
    assert len(uses) == 1  # the resend took no second use
