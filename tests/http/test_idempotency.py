"""``Idempotency-Key`` on ``POST /v1/items`` (and, at the edge, on the decision API): a retry
with the key gets the first answer, never a second save; the key with another body is 409."""

from __future__ import annotations

import uuid

import httpx
import pytest

from tests.http.items_support import bearer
from tollgate.http.deps import Services


def page(slug: str) -> dict[str, str]:
    return {"url": f"https://example.com/{slug}", "title": f"Notes on {slug}"}


async def test_a_retry_with_the_key_gets_the_first_answer_and_saves_once(
    api: httpx.AsyncClient, http_services: Services
) -> None:
    who = bearer(http_services, f"u-idem-{uuid.uuid4().hex[:6]}")
    key = {"Idempotency-Key": f"save-{uuid.uuid4()}"}
    first = await api.post("/v1/items", json=page("retry"), headers={**who, **key})
    assert first.status_code == 201, first.text
    # Without the key the same save answers 200 "already saved"; with it, the first answer.
    again = await api.post("/v1/items", json=page("retry"), headers={**who, **key})
    assert (again.status_code, again.json()) == (201, first.json())
    plain = await api.post("/v1/items", json=page("retry"), headers=who)
    assert (plain.status_code, plain.json()["created"]) == (200, False)
    kept = await http_services.pool.fetchval(
        "SELECT count(*) FROM idempotency_keys WHERE key = $1", key["Idempotency-Key"])
    assert kept == 1


async def test_the_key_with_another_body_is_409_and_saves_nothing(
    api: httpx.AsyncClient, http_services: Services
) -> None:
    who = bearer(http_services, f"u-idem-{uuid.uuid4().hex[:6]}")
    key = {"Idempotency-Key": f"save-{uuid.uuid4()}"}
    assert (await api.post("/v1/items", json=page("one"), headers={**who, **key})
            ).status_code == 201
    other = await api.post("/v1/items", json=page("two"), headers={**who, **key})
    assert other.status_code == 409
    assert "idempotency_key_reused" in other.json()["detail"]
    saved = await http_services.pool.fetchval(
        "SELECT count(*) FROM items WHERE url = $1", page("two")["url"])
    assert saved == 0


async def test_another_user_reusing_a_key_is_refused_not_shown_the_answer(
    api: httpx.AsyncClient, http_services: Services
) -> None:
    key = {"Idempotency-Key": f"shared-{uuid.uuid4()}"}
    mine = bearer(http_services, f"u-idem-{uuid.uuid4().hex[:6]}")
    theirs = bearer(http_services, f"u-idem-{uuid.uuid4().hex[:6]}")
    assert (await api.post("/v1/items", json=page("mine"), headers={**mine, **key})
            ).status_code == 201
    other = await api.post("/v1/items", json=page("mine"), headers={**theirs, **key})
    assert other.status_code == 409
    assert "item_id" not in other.json()


async def test_a_refusal_is_not_kept_so_the_retry_runs_again(
    api: httpx.AsyncClient, http_services: Services
) -> None:
    key = {"Idempotency-Key": f"save-{uuid.uuid4()}"}
    refused = await api.post("/v1/items", json=page("role"), headers={
        **bearer(http_services, "u-idem-noreader", role="viewer"), **key})
    assert refused.status_code == 403
    assert not await http_services.pool.fetchval(
        "SELECT count(*) FROM idempotency_keys WHERE key = $1", key["Idempotency-Key"])


@pytest.mark.parametrize(("value", "rule"), [
    ("k" * 256, "string_too_long"),
    ("tab\there", "string_pattern_mismatch"),
    ("", "string_too_short"),
])
@pytest.mark.parametrize("route", ["/v1/items", "/v1/reviews/wf-1/decision"])
async def test_a_bad_key_is_the_edges_422_naming_the_header(
    api: httpx.AsyncClient, http_services: Services, route: str, value: str, rule: str
) -> None:
    body = page("bad-key") if route == "/v1/items" else {
        "request_id": "r", "draft_version": 1, "decision": "approve"}
    answer = await api.post(route, json=body, headers={
        **bearer(http_services, "u-idem-bad", role="care_lead"), "Idempotency-Key": value})
    assert answer.status_code == 422, answer.text
    assert answer.json()["field"] == "$.Idempotency-Key"
    assert answer.json()["rule"] == rule
    assert value not in answer.text or not value
