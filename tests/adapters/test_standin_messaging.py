"""The messaging stand-in over real loopback HTTP: dedupe by key, faults, down/up, runner."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator

import httpx
import pytest

from tests.eventually import eventually
from tollgate.dev.standins import (
    CrmStandIn,
    MessagingStandIn,
    PortInUseError,
    start_standins,
)

BODY = {
    "tenant_id": "acme",
    "recipient_ref": "C-1001",
    "channel": "sms",
    "body": "Miu is due for a check-up",
    "correlation_id": "corr-1",
}


@pytest.fixture
def target() -> Iterator[MessagingStandIn]:
    standin = MessagingStandIn().start()
    yield standin
    standin.stop()


@pytest.fixture
def http(target: MessagingStandIn) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=target.url, timeout=5) as client:
        yield client


def post(http: httpx.Client, key: str | None, body: dict[str, str] = BODY) -> httpx.Response:
    headers = {"Idempotency-Key": key} if key else {}
    return http.post("/messages", json=body, headers=headers)


def test_post_without_idempotency_key_is_refused_and_stores_nothing(target, http) -> None:
    response = post(http, None)
    assert response.status_code == 400
    assert response.json()["error"] == "missing_idempotency_key"
    assert target.message_count == 0
    assert target.post_attempts == 1


def test_post_with_missing_field_is_refused(target, http) -> None:
    response = post(http, "k-1", {k: v for k, v in BODY.items() if k != "body"})
    assert response.status_code == 400
    assert target.message_count == 0


def test_same_key_twice_stores_once_and_returns_the_stored_message(target, http) -> None:
    first = post(http, "k-1")
    second = post(http, "k-1", {**BODY, "body": "a different text"})

    assert first.status_code == 201
    assert second.status_code == 200
    assert second.json() == first.json()
    assert first.json()["status"] == "accepted"
    assert first.json()["idempotency_key"] == "k-1"
    assert target.message_count == 1
    assert target.messages()[0]["body"] == BODY["body"]
    assert http.get("/messages/count").json() == {"count": 1, "post_attempts": 2}
    assert http.get("/messages/by-key/k-1").json() == first.json()
    assert http.get("/messages/by-key/nope").status_code == 404


def test_list_filters_by_tenant(http) -> None:
    post(http, "k-a")
    post(http, "k-g", {**BODY, "tenant_id": "globex"})
    acme = http.get("/messages", params={"tenant_id": "acme"}).json()
    assert [m["idempotency_key"] for m in acme] == ["k-a"]
    assert len(http.get("/messages").json()) == 2


async def test_fifty_concurrent_posts_with_one_key_store_exactly_one(target) -> None:
    # A short delay on every POST makes the 50 handler threads overlap before they store.
    target.inject("delay", times=50, ms=50)
    async with httpx.AsyncClient(base_url=target.url, timeout=10) as client:
        responses = await asyncio.gather(
            *(
                client.post("/messages", json=BODY, headers={"Idempotency-Key": "burst"})
                for _ in range(50)
            )
        )
    assert target.message_count == 1
    assert target.post_attempts == 50
    assert sorted(r.status_code for r in responses) == [200] * 49 + [201]
    assert len({r.json()["id"] for r in responses}) == 1


@pytest.mark.parametrize(
    ("kind", "status", "stored"),
    [
        ("fail_after_write", 504, 1),
        ("bad_gateway_after_write", 502, 1),
        ("unavailable", 503, 0),
        ("reject", 422, 0),
        ("rate_limit", 429, 0),
    ],
)
def test_each_fault_answers_its_status_and_stores_as_documented(
    target, http, kind, status, stored
) -> None:
    target.inject(kind, retry_after=7, code="opted_out")
    response = post(http, "k-1")
    assert response.status_code == status
    assert target.message_count == stored
    if kind == "rate_limit":
        assert response.headers["Retry-After"] == "7"
    if kind == "reject":
        assert response.json() == {"error": "business_rule", "code": "opted_out"}
    # The fault was used up: the next POST with the same key is normal.
    assert post(http, "k-1").status_code in (200, 201)
    assert target.message_count == 1


def test_fault_applies_to_next_n_posts_and_can_target_one_key(target, http) -> None:
    target.inject("unavailable", times=2, key="k-b")
    assert post(http, "k-a").status_code == 201  # other keys pass untouched
    assert post(http, "k-b").status_code == 503
    assert post(http, "k-b").status_code == 503
    assert post(http, "k-b").status_code == 201


def test_faults_over_admin_http(target, http) -> None:
    created = http.post("/_faults", json=[{"kind": "unavailable"}, {"kind": "reject", "code": "x"}])
    assert created.status_code == 201
    assert [f["kind"] for f in created.json()["pending"]] == ["unavailable", "reject"]
    assert http.delete("/_faults").json() == {"cleared": 2}
    assert post(http, "k-1").status_code == 201

    bad = http.post("/_faults", json=[{"kind": "unavailable"}, {"kind": "explode"}])
    assert bad.status_code == 400
    assert http.get("/_faults").json() == {"pending": []}  # nothing of a bad batch is queued
    assert http.post("/_faults", json={"kind": "malformed"}).status_code == 400  # CRM-only


def test_lookup_delay_hides_the_stored_message_from_lookups_only(target, http) -> None:
    # A minute: "not visible yet" cannot race the clock however slow the machine is.
    target.inject("lookup_delay", ms=60_000)
    assert post(http, "k-1").status_code == 201
    assert target.message_count == 1
    assert target.get_by_key("k-1") is not None  # stored...
    assert http.get("/messages/by-key/k-1").status_code == 404  # ...but not visible to lookups


async def test_lookup_delay_lifts_and_the_message_becomes_visible(target, http) -> None:
    target.inject("lookup_delay", ms=100)
    assert post(http, "k-1").status_code == 201
    # The stand-in serves from its own thread, so a blocking look from the loop is fine here.
    await eventually(lambda: http.get("/messages/by-key/k-1").status_code,
                     "the message visible by its key", until=lambda code: code != 404,
                     timeout=10)
    assert http.get("/messages/by-key/k-1").json()["id"] == target.messages()[0]["id"]


def test_non_deduping_mode_stores_every_post_as_a_new_message(target, http) -> None:
    assert http.post("/_mode", json={"dedupe": False}).json() == {"dedupe": False}
    first, second = post(http, "k-1"), post(http, "k-1")
    assert (first.status_code, second.status_code) == (201, 201)
    assert first.json()["id"] != second.json()["id"]
    assert target.message_count == 2 and target.posts_for("k-1") == 2
    # A lookup by key still answers, with the first message the key labelled.
    assert http.get("/messages/by-key/k-1").json()["id"] == first.json()["id"]
    assert http.get("/messages/count").json() == {"count": 2, "post_attempts": 2}


def test_mode_is_validated_and_reset_restores_deduping(target, http) -> None:
    bad = http.post("/_mode", json={"dedupe": "no"})
    assert bad.status_code == 400 and bad.json()["error"] == "bad_request"
    target.dedupe = False
    target.reset()
    post(http, "k-1")
    post(http, "k-1")
    assert target.message_count == 1 and target.posts_for("k-1") == 2


def test_posts_are_counted_per_key_even_when_refused(target, http) -> None:
    target.inject("rate_limit", key="k-1")
    assert post(http, "k-1").status_code == 429
    assert post(http, "k-1").status_code == 201
    post(http, "k-2")
    assert (target.posts_for("k-1"), target.posts_for("k-2"), target.posts_for("k-3")) == (2, 1, 0)


def test_hang_after_write_stores_then_outlives_the_client_timeout(target) -> None:
    target.inject("hang_after_write", ms=2000)
    with httpx.Client(base_url=target.url, timeout=0.3) as client, pytest.raises(httpx.ReadTimeout):
        post(client, "k-1")
    assert target.message_count == 1


def test_drop_after_write_closes_the_connection_without_an_answer(target, http) -> None:
    target.inject("drop_after_write")
    with pytest.raises(httpx.RemoteProtocolError):
        post(http, "k-1")
    assert target.message_count == 1


def test_down_refuses_connections_and_up_serves_again_on_the_same_port(target, http) -> None:
    assert post(http, "k-1").status_code == 201  # leaves a keep-alive connection in the pool
    port = target.port
    target.down()
    with pytest.raises(httpx.ConnectError):
        post(http, "k-2")
    target.up()
    assert target.port == port
    assert post(http, "k-2").status_code == 201
    assert target.message_count == 2  # data survives a down/up


def test_port_in_use_raises_an_error_naming_the_port() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(PortInUseError, match=str(port)) as info:
            MessagingStandIn(port=port).start()
    assert isinstance(info.value, OSError)


def test_standins_refuse_non_loopback_hosts() -> None:
    with pytest.raises(ValueError, match="loopback"):
        CrmStandIn(host="0.0.0.0")  # noqa: S104


def test_start_standins_runs_both_and_stops_both() -> None:
    with start_standins() as standins:
        assert httpx.get(f"{standins.messaging_url}/messages/count").status_code == 200
        assert httpx.get(f"{standins.crm_url}/tenants/acme/customers/C-1").status_code == 404
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{standins.messaging_url}/messages/count")


def test_start_standins_leaves_nothing_running_when_a_port_is_taken() -> None:
    with start_standins() as first:
        with pytest.raises(PortInUseError):
            start_standins(crm_port=0, messaging_port=first.messaging.port)
        # Only the first pair is listening; the half-started CRM was stopped again.
        assert first.crm.is_up and first.messaging.is_up
