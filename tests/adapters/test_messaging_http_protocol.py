"""MessagingHttpAdapter's protocol corners through ``httpx.MockTransport``: the request's shape,
an HTTP-date Retry-After, 409 as already done (or not confirmable), unreadable answers, and how
each status, transport error and lookup error is classified. Against the stand-in:
test_messaging_http.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from adapters.http.messaging import MessagingHttpAdapter
from adapters.ports.targets import TargetWrite
from contracts.errors import (
    RateLimited,
    RejectedError,
    RetryableError,
    TimeoutBeforeWrite,
    TollgateError,
    UnknownWrite,
)
from tests.adapters.messaging_kit import BODY_TEXT, action

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
