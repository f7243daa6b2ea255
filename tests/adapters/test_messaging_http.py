"""MessagingHttpAdapter against the messaging stand-in over real loopback HTTP: each outcome
classified so a message is never sent twice (answer lost after the write, hang, 429, 503, 4xx,
slow, down, a receipt lookup cannot see yet). Protocol corners: test_messaging_http_protocol.py.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from adapters.http.messaging import MessagingHttpAdapter
from adapters.ports.targets import ActionAdapter
from contracts.errors import (
    RateLimited,
    RejectedError,
    RetryableError,
    TimeoutBeforeWrite,
    UnknownWrite,
)
from tests.adapters.messaging_kit import BODY_TEXT, action, assert_no_private_data
from tests.eventually import eventually
from tollgate.dev.standins import MessagingStandIn


@pytest.fixture
def target() -> Iterator[MessagingStandIn]:
    standin = MessagingStandIn().start()
    yield standin
    standin.stop()


@pytest.fixture
async def adapter(target: MessagingStandIn) -> AsyncIterator[MessagingHttpAdapter]:
    messaging = MessagingHttpAdapter(target.url, timeout=2.0)
    yield messaging
    await messaging.aclose()


def test_declares_the_port_and_its_safety_properties(adapter) -> None:
    assert isinstance(adapter, ActionAdapter)
    assert (adapter.name, adapter.dedupes_by_key, adapter.supports_lookup) == (
        "messaging",
        True,
        True,
    )


# --- real HTTP against the stand-in ------------------------------------------------------------


async def test_send_delivers_one_message_with_a_reference_not_an_address(target, adapter) -> None:
    write = await adapter.execute(action())
    again = await adapter.execute(action())

    assert again == write
    assert write.idempotency_key == "acme:evt-1:messaging:send"
    [stored] = target.messages()
    assert stored["id"] == write.external_id
    assert stored["recipient_ref"] == "C-1001"
    assert stored["body"] == BODY_TEXT
    assert (stored["tenant_id"], stored["correlation_id"], stored["channel"]) == (
        "acme",
        "corr-1",
        "sms",
    )


@pytest.mark.parametrize(
    "kind", ["fail_after_write", "bad_gateway_after_write", "drop_after_write"]
)
async def test_answer_lost_after_the_write_is_unknown_and_lookup_finds_it(
    target, adapter, kind
) -> None:
    target.inject(kind)
    with pytest.raises(UnknownWrite) as info:
        await adapter.execute(action())
    assert not info.value.retryable
    assert_no_private_data(info.value, action().action_key)
    assert target.message_count == 1

    found = await adapter.lookup(action().action_key)
    assert found is not None and found.external_id == target.messages()[0]["id"]


async def test_hang_past_the_client_timeout_is_unknown_and_the_target_holds_one(target) -> None:
    target.inject("hang_after_write", ms=3000)
    impatient = MessagingHttpAdapter(target.url, timeout=0.3)
    try:
        with pytest.raises(UnknownWrite):
            await impatient.execute(action())
        # The reconciler's path: look the key up, never resend blind.
        assert await impatient.lookup(action().action_key) is not None
    finally:
        await impatient.aclose()
    assert target.message_count == 1


async def test_rate_limit_carries_retry_after_and_stores_nothing(target, adapter) -> None:
    target.inject("rate_limit", retry_after=7)
    with pytest.raises(RateLimited) as info:
        await adapter.execute(action())
    assert info.value.retry_after == 7
    assert target.message_count == 0


async def test_unavailable_is_retryable_and_a_resend_with_the_same_key_sends_once(
    target, adapter
) -> None:
    target.inject("unavailable")
    with pytest.raises(RetryableError) as info:
        await adapter.execute(action())
    assert type(info.value) is RetryableError
    assert target.message_count == 0
    await adapter.execute(action())
    assert target.message_count == 1


async def test_business_rejection_is_final_with_the_status_code(target, adapter) -> None:
    target.inject("reject", code="opted_out")
    with pytest.raises(RejectedError) as info:
        await adapter.execute(action())
    assert info.value.code == "target_422"
    assert "opted_out" in info.value.message
    assert not info.value.retryable
    assert target.message_count == 0


async def test_a_slow_target_within_the_timeout_is_a_normal_success(target, adapter) -> None:
    target.inject("delay", ms=200)
    write = await adapter.execute(action())
    assert write.external_id == target.messages()[0]["id"]


async def test_target_down_is_timeout_before_write_then_up_succeeds_on_same_port(
    target, adapter
) -> None:
    await adapter.execute(action("k-warm"))  # a pooled keep-alive connection exists
    target.down()
    with pytest.raises(TimeoutBeforeWrite) as info:
        await adapter.execute(action())
    assert info.value.retryable
    assert target.post_attempts == 1  # the second send never reached the target

    with pytest.raises(RetryableError):
        await adapter.lookup(action().action_key)  # a lookup error is never "not found"

    target.up()
    await adapter.execute(action())
    assert target.message_count == 2


async def test_a_stored_write_can_be_invisible_to_lookup_for_a_while(target, adapter) -> None:
    # A minute of invisibility: "not found yet" cannot race the delay lifting.
    target.inject("fail_after_write", lookup_delay_ms=60_000)
    with pytest.raises(UnknownWrite):
        await adapter.execute(action())
    assert await adapter.lookup(action().action_key) is None  # stored, not visible yet
    assert target.message_count == 1


async def test_a_delayed_receipt_becomes_visible_by_its_key(target, adapter) -> None:
    target.inject("fail_after_write", lookup_delay_ms=300)
    with pytest.raises(UnknownWrite):
        await adapter.execute(action())
    found = await eventually(lambda: adapter.lookup(action().action_key),
                             "the receipt visible by its key", until=lambda f: f is not None,
                             timeout=10)
    assert found is not None and found.external_id == target.messages()[0]["id"]
    assert target.message_count == 1


async def test_lookup_of_an_unknown_key_is_none(adapter) -> None:
    assert await adapter.lookup("never-sent") is None


async def test_lookup_finds_a_key_with_reserved_characters(adapter) -> None:
    key = "acme/evt-1?x=1#send"
    write = await adapter.execute(action(key))
    assert await adapter.lookup(key) == write
    assert await adapter.lookup("acme") is None
