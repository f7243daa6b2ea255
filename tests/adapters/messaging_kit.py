"""What the messaging adapter's tests share: the event, the approved send and the check that an
error says nothing private (tests/adapters/test_messaging_http*.py, test_targets.py)."""

from __future__ import annotations

from contracts import ActionRequest, EventRef

REF = EventRef(
    workflow_id="event/acme/evt-1",
    tenant_id="acme",
    event_id="evt-1",
    event_type="CARE_DUE",
    entity_id="C-1001",
    correlation_id="corr-1",
    schema_version=3,
)
BODY_TEXT = "Hi Lan, Miu is due for a check-up"


def action(key: str = "acme:evt-1:messaging:send") -> ActionRequest:
    return ActionRequest(
        ref=REF,
        adapter="messaging",
        action="send",
        action_key=key,
        channel="sms",
        body=BODY_TEXT,
        policy_version="p1",
        approved_by="reviewer-1",
    )


def assert_no_private_data(exc: BaseException, key: str) -> None:
    text = str(exc)
    for secret in (BODY_TEXT, REF.entity_id, key):
        assert secret not in text
