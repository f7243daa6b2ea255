"""``POST /v1/events``: every answer a producer can get, through an HTTP client.

Temporal is unreachable here on purpose: the intake answers from PostgreSQL alone."""

from __future__ import annotations

import json
import time

import httpx

from tests.http.conftest import post_events, signed_headers
from tests.http.events_support import event, outbox_rows
from tollgate.http.deps import Services
from tollgate.http.ratelimit import TenantRateLimiter


async def test_accepted_event_is_queued_once_and_repeat_is_a_duplicate(
        api: httpx.AsyncClient, http_services: Services) -> None:
    ev = event()
    first = await post_events(api, ev)
    assert first.status_code == 202, first.text
    wf_id = first.json()["workflow_id"]
    assert wf_id == f"event/acme/{ev['idempotency_key']}"
    again = await post_events(api, ev)
    assert again.status_code == 200
    assert again.json()["status"] == "duplicate"
    assert len(await outbox_rows(http_services, wf_id)) == 1


async def test_same_key_other_payload_is_409_and_queued_for_quarantine(
        api: httpx.AsyncClient, http_services: Services) -> None:
    ev = event()
    assert (await post_events(api, ev)).status_code == 202
    other = {**ev, "payload": {**ev["payload"], "channel": "email"}}
    answer = await post_events(api, other)
    assert answer.status_code == 409
    assert answer.json()["reason_code"] == "idempotency_conflict"
    queued = await http_services.pool.fetchval(
        "SELECT count(*) FROM outbox WHERE raw LIKE '%' || $1 || '%'", ev["idempotency_key"])
    assert queued == 2  # the first delivery and the conflicting one, for quarantine


async def test_invalid_event_is_422_with_reason_and_still_queued(
        api: httpx.AsyncClient, http_services: Services) -> None:
    bad = event(schema_version=9)
    answer = await post_events(api, bad)
    assert answer.status_code == 422
    assert answer.json()["reason_code"] == "unknown_schema"
    assert len(await outbox_rows(http_services, answer.json()["workflow_id"])) == 1
    infinite = await post_events(api, json.dumps(event(payload={"customer_id": float("inf")})))
    assert infinite.json()["reason_code"] == "malformed_json"
    garbage = await post_events(api, b"{not json")
    assert garbage.status_code == 422
    assert garbage.json()["reason_code"] == "malformed_json"


async def test_unsigned_envelope_is_signed_by_the_intake(
        api: httpx.AsyncClient, http_services: Services) -> None:
    answer = await post_events(api, event())  # no "signature" field: the header HMAC vouches
    assert answer.status_code == 202
    raw = (await outbox_rows(http_services, answer.json()["workflow_id"]))[0]["raw"]
    assert json.loads(raw)["signature"].startswith("sha256=")


async def test_wrong_envelope_signature_is_422_bad_signature(api: httpx.AsyncClient) -> None:
    answer = await post_events(api, event(signature="sha256=" + "0" * 64))
    assert answer.status_code == 422
    assert answer.json()["reason_code"] == "bad_signature"


async def test_batch_answers_each_event(api: httpx.AsyncClient) -> None:
    good, bad = event(), event(schema_version=9)
    answer = await post_events(api, [good, bad])
    assert answer.status_code == 200
    assert [r["http_status"] for r in answer.json()["results"]] == [202, 422]


async def test_signature_problems_are_401(api: httpx.AsyncClient) -> None:
    body = json.dumps(event()).encode()
    unsigned = await api.post("/v1/events", content=body)
    assert unsigned.status_code == 401
    wrong_key = await post_events(api, body, secret="not-the-key")
    assert wrong_key.status_code == 401
    assert wrong_key.json()["code"] == "bad_signature"
    replayed = await post_events(api, body, ts=int(time.time()) - 3600)
    assert replayed.status_code == 401
    assert replayed.json()["code"] == "stale_timestamp"
    tampered = signed_headers(body)
    sent = await api.post("/v1/events", content=body + b" ", headers=tampered)
    assert sent.status_code == 401


async def test_tenant_problems_are_403(api: httpx.AsyncClient) -> None:
    unknown = await post_events(api, event(), tenant="initech", secret="whatever")
    assert unknown.status_code == 403
    assert unknown.json()["code"] == "unknown_tenant"
    crossing = await post_events(api, event(tenant="globex"), tenant="acme")
    assert crossing.status_code == 403
    assert crossing.json()["code"] == "cross_tenant"


async def test_too_large_is_413(api: httpx.AsyncClient, http_services: Services) -> None:
    big = event(payload={"customer_id": "C-1", "note": "x" * (http_services.max_body + 1)})
    answer = await post_events(api, big)
    assert answer.status_code == 413


async def test_over_the_tenant_rate_is_429_and_other_tenants_pass(
        api: httpx.AsyncClient, http_services: Services) -> None:
    saved = http_services.limiter
    http_services.limiter = TenantRateLimiter(rate=0.01, burst=2)
    try:
        codes = [(await post_events(api, event())).status_code for _ in range(3)]
        assert codes == [202, 202, 429]
        limited = await post_events(api, event())
        assert int(limited.headers["Retry-After"]) >= 1
        assert (await post_events(api, event("globex"), tenant="globex")).status_code == 202
    finally:
        http_services.limiter = saved


async def test_openapi_document_lists_the_intake(api: httpx.AsyncClient) -> None:
    doc = (await api.get("/openapi.json")).json()
    assert set(doc["paths"]["/v1/events"]["post"]["responses"]) >= {
        "200", "202", "401", "403", "409", "413", "422", "429"}
