"""The envelope the notify consumer hands the control core: signed with the tenant's key, keyed
by (event id, consumer), the same on every attempt; refused in one line when it cannot be."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.consumer_intake import ConsumerIntakeActivities
from contracts import EventEnvelope
from contracts.fanout import BusinessEvent, ConsumeRequest, Subscription
from policies import signing

SECRETS = {"acme": "s" * 32}


def request(**payload: object) -> ConsumeRequest:
    event = BusinessEvent(
        event_id="order-77", event_type="ORDER_PLACED", schema_version=1, tenant_id="acme",
        occurred_at=datetime(2026, 12, 2, 9, 0, tzinfo=UTC),
        payload={"order_id": "O-77", "customer_id": "C-7", "total_cents": 100,
                 "lines": [{"sku": "S", "quantity": 1}], **payload})
    sub = Subscription(consumer="notify", event_types=["ORDER_PLACED"], through="control_core")
    return ConsumeRequest(event=event, subscription=sub, subscriptions_version="2026-12-02")


async def test_the_envelope_is_signed_and_keyed_by_event_and_consumer() -> None:
    activities = ConsumerIntakeActivities(SECRETS)
    env = ActivityEnvironment()
    first = await env.run(activities.control_core_event, request())
    again = await env.run(activities.control_core_event, request())
    assert first.raw == again.raw  # a retried attempt builds the same event
    data = json.loads(first.raw)
    envelope = EventEnvelope.model_validate(data)
    assert signing.verify(data, SECRETS["acme"])
    assert (envelope.event_id, envelope.idempotency_key) == ("order-77.notify",) * 2
    assert (envelope.correlation_id, envelope.entity_id) == ("order-77", "C-7")
    assert envelope.source == "fan-out/notify" and envelope.payload["order_id"] == "O-77"


@pytest.mark.parametrize(("secrets", "payload", "code"), [
    ({}, {}, "unknown_tenant"),
    (SECRETS, {"customer_id": "not an id"}, "bad_payload"),
])
async def test_an_envelope_that_cannot_be_built_is_final_for_the_consumer(
        secrets: dict[str, str], payload: dict[str, object], code: str) -> None:
    with pytest.raises(ApplicationError) as caught:
        await ActivityEnvironment().run(ConsumerIntakeActivities(secrets).control_core_event,
                                        request(**payload))
    assert caught.value.non_retryable and code in str(caught.value)
