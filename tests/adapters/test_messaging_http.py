"""MessagingHttpAdapter: each outcome classified so a message is never sent twice.

Behaviour runs over real loopback HTTP against the stand-in; protocol corners (HTTP-date
Retry-After, 409, unreadable bodies, transport errors) use ``httpx.MockTransport``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from adapters.http.messaging import MessagingHttpAdapter
from adapters.ports.targets import ActionAdapter, TargetWrite
from contracts import ActionRequest, EventRef
from contracts.errors import (
    RateLimited,
    RejectedError,
    RetryableError,
    TimeoutBeforeWrite,
    TollgateError,
    UnknownWrite,
)
from tests.eventually import eventually
from tollgate.dev.standins import MessagingStandIn

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


# --- protocol corners with MockTransport -------------------------------------------------------

Handler = Callable[[httpx.Request], httpx.Response]


async def run(handler: Handler, call: str = "execute") -> TargetWrite | None:
    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    adapter = MessagingHttpAdapter("http://messaging.test", client=client)
    try:
        if call == "execute":
            return await adapter.execute(action())
        return await adapter.lookup(action().action_key)
    finally:
        await client.aclose()


def receipt(key: str = "acme:evt-1:messaging:send", status: int = 200) -> httpx.Response:
    return httpx.Response(status, json={"id": "m-9", "idempotency_key": key, "status": "accepted"})


async def test_request_shape_carries_the_key_header_and_no_address() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return receipt(status=201)

    assert await run(handler) == TargetWrite(
        idempotency_key="acme:evt-1:messaging:send", external_id="m-9"
    )
    [request] = seen
    assert (request.method, request.url.path) == ("POST", "/messages")
    assert request.headers["Idempotency-Key"] == "acme:evt-1:messaging:send"
    assert json.loads(request.content) == {
        "tenant_id": "acme",
        "recipient_ref": "C-1001",
        "channel": "sms",
        "body": BODY_TEXT,
        "correlation_id": "corr-1",
    }


async def test_retry_after_as_http_date() -> None:
    when = datetime.now(UTC) + timedelta(seconds=120)
    header = format_datetime(when, usegmt=True)
    with pytest.raises(RateLimited) as info:
        await run(lambda r: httpx.Response(429, headers={"Retry-After": header}))
    assert 110 <= info.value.retry_after <= 120


async def test_409_already_exists_is_success_via_lookup() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            return httpx.Response(409, json={"error": "already_exists"})
        assert request.url.path == "/messages/by-key/acme:evt-1:messaging:send"
        return receipt()

    write = await run(handler)
    assert write is not None and write.external_id == "m-9"
    # Said so, for the circuit's duplicate count (a key this send never sent was held).
    assert write.status == "already_held"


async def test_409_that_lookup_cannot_confirm_is_unknown_not_success() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(409 if request.method == "POST" else 404)

    with pytest.raises(UnknownWrite):
        await run(handler)


@pytest.mark.parametrize(
    "response",
    [
        httpx.Response(201, content=b"{not json"),
        httpx.Response(201, json=["a list"]),
        httpx.Response(201, json={"idempotency_key": "acme:evt-1:messaging:send"}),
        receipt(key="someone-elses-key", status=201),
    ],
)
async def test_unreadable_success_is_unknown_write(response: httpx.Response) -> None:
    with pytest.raises(UnknownWrite) as info:
        await run(lambda r: response)
    assert info.value.code == "messaging_bad_response"


@pytest.mark.parametrize(
    ("status", "error", "code"),
    [
        (400, RejectedError, "target_400"),
        (404, RejectedError, "target_404"),
        (422, RejectedError, "target_422"),
        (500, UnknownWrite, "messaging_500"),
        (502, UnknownWrite, "messaging_502"),
        (504, UnknownWrite, "messaging_504"),
        (503, RetryableError, "messaging_503"),
        (302, UnknownWrite, "messaging_302"),
    ],
)
async def test_status_classification(status: int, error: type[TollgateError], code: str) -> None:
    with pytest.raises(error) as info:
        await run(lambda r: httpx.Response(status, json={"code": "Lan's number +84 90"}))
    assert type(info.value) is error
    assert info.value.code == code
    assert "+84" not in str(info.value)  # an unsafe target code is not echoed


@pytest.mark.parametrize(
    ("exc", "error"),
    [
        (httpx.ConnectError("refused"), TimeoutBeforeWrite),
        (httpx.ConnectTimeout("slow connect"), TimeoutBeforeWrite),
        (httpx.PoolTimeout("no connection free"), TimeoutBeforeWrite),
        (httpx.ReadTimeout("slow answer"), UnknownWrite),
        (httpx.WriteTimeout("slow send"), UnknownWrite),
        (httpx.RemoteProtocolError("server disconnected"), UnknownWrite),
        (httpx.ReadError("connection reset"), UnknownWrite),
    ],
)
async def test_transport_error_classification(
    exc: httpx.RequestError, error: type[TollgateError]
) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise exc

    with pytest.raises(error) as info:
        await run(handler)
    assert type(info.value) is error


@pytest.mark.parametrize(
    ("response", "error"),
    [
        (httpx.Response(500), RetryableError),
        (httpx.Response(429, headers={"Retry-After": "3"}), RateLimited),
        (httpx.Response(200, content=b"<html>"), RetryableError),
    ],
)
async def test_lookup_errors_are_retryable_never_none(
    response: httpx.Response, error: type[TollgateError]
) -> None:
    with pytest.raises(error) as info:
        await run(lambda r: response, call="lookup")
    assert type(info.value) is error
