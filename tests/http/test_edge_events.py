"""``POST /v1/events`` with hostile text: refused 422 naming the field and rule, quarantined with
its reason, never a 500, and never under the event's business key (issue 25)."""

from __future__ import annotations

import json

import httpx

from tests.http.conftest import post_events
from tests.http.events_support import event, outbox_rows
from tollgate.http.deps import Services


async def quarantined(svc: Services, workflow_id: str) -> str | None:
    return await svc.pool.fetchval(
        "SELECT reason_code FROM quarantine WHERE workflow_id = $1", workflow_id)


async def test_lone_surrogate_is_422_with_field_and_rule_and_quarantined(
        api: httpx.AsyncClient, http_services: Services) -> None:
    ev = event()
    body = json.dumps(ev)[:-1] + ', "note": "\\ud800"}'  # json.dumps escapes: "\ud800" as text
    answer = await post_events(api, body)
    assert answer.status_code == 422, answer.text
    got = answer.json()
    assert (got["reason_code"], got["field"], got["rule"]) == (
        "lone_surrogate", "$.note", "lone_surrogate")
    assert got["workflow_id"].startswith("quarantine/")
    assert await quarantined(http_services, got["workflow_id"]) == "lone_surrogate"
    # the key was not burnt: the same key, clean, is accepted
    clean = await post_events(api, ev)
    assert clean.status_code == 202, clean.text


async def test_nul_escaped_and_raw_are_refused_not_stored(
        api: httpx.AsyncClient, http_services: Services) -> None:
    ev = event()
    ev["payload"] = {**ev["payload"], "note": "a\u0000b"}
    escaped = await post_events(api, ev)
    assert escaped.status_code == 422
    assert (escaped.json()["field"], escaped.json()["rule"]) == ("$.payload.note", "nul")
    raw = await post_events(api, b'{"a": "\x00"}')
    assert raw.status_code == 422
    assert raw.json()["rule"] == "nul"
    assert await quarantined(http_services, raw.json()["workflow_id"]) == "nul"


async def test_deep_nesting_is_422_too_deep_not_500(
        api: httpx.AsyncClient, http_services: Services) -> None:
    deep = "[" * 1000 + "]" * 1000
    answer = await post_events(api, deep)
    assert answer.status_code == 422, answer.text
    assert (answer.json()["field"], answer.json()["rule"]) == ("$", "too_deep")
    obj = '{"a":' * 1000 + "1" + "}" * 1000
    assert (await post_events(api, obj)).json()["rule"] == "too_deep"


async def test_huge_number_and_control_character_name_their_field(
        api: httpx.AsyncClient) -> None:
    body = json.dumps(event())[:-1] + ', "n": 1' + "0" * 5000 + "}"
    answer = await post_events(api, body)
    assert (answer.status_code, answer.json()["field"], answer.json()["rule"]) == (
        422, "$.n", "number_too_large")
    bell = await post_events(api, event(payload={"customer_id": "C-1", "x": "ding\u0007"}))
    assert (bell.json()["field"], bell.json()["rule"]) == ("$.payload.x", "control_character")


async def test_batch_answers_the_bad_event_alone_and_queues_the_good_one(
        api: httpx.AsyncClient, http_services: Services) -> None:
    good, bad = event(), event()
    body = "[" + json.dumps(good) + "," + json.dumps(bad)[:-1] + ', "x": "\\udfff"}]'
    answer = await post_events(api, body)
    assert answer.status_code == 200, answer.text
    first, second = answer.json()["results"]
    assert first["http_status"] == 202
    assert (second["http_status"], second["field"], second["rule"]) == (
        422, "$[1].x", "lone_surrogate")
    assert len(await outbox_rows(http_services, first["workflow_id"])) == 1
    assert await outbox_rows(http_services, f"event/acme/{bad['idempotency_key']}") == []


async def test_personal_data_key_and_too_large_are_told_invalid(
        api: httpx.AsyncClient) -> None:
    mail = await post_events(api, event(key="jane@example.com"))
    assert mail.status_code == 422, mail.text
    assert mail.json()["reason_code"] == "personal_data_in_key"
    assert not mail.json()["workflow_id"].startswith("event/")
    fields = {f"x{i}": "y" * 15_000 for i in range(5)}  # each string within its own limit
    big = await post_events(api, event(payload={"customer_id": "C-1", **fields}))
    assert big.status_code == 422, big.text
    assert big.json()["reason_code"] == "too_large"


async def test_trailing_newline_in_key_never_becomes_a_workflow_id(
        api: httpx.AsyncClient) -> None:
    answer = await post_events(api, event(key="wh-nl-key\n"))
    assert answer.status_code == 422
    assert "\n" not in answer.json()["workflow_id"]
    assert answer.json()["workflow_id"].startswith("quarantine/")


async def test_an_event_holding_a_key_twice_is_422_duplicate_key_and_nothing_is_queued(
        api: httpx.AsyncClient, http_services: Services) -> None:
    # json.loads keeps the last value: the event would go on saying "C-2" while a producer
    # (or a log, a mirror, a second consumer) that keeps the first reads "C-1".
    ev = event()
    body = json.dumps({k: v for k, v in ev.items() if k != "payload"})[:-1] + (
        ', "payload": {"customer_id": "C-1", "customer_id": "C-2"}}')
    answer = await post_events(api, body)
    assert answer.status_code == 422, answer.text
    got = answer.json()
    assert (got["reason_code"], got["field"], got["rule"]) == (
        "duplicate_key", "$.payload.customer_id", "duplicate_key")
    assert await quarantined(http_services, got["workflow_id"]) == "duplicate_key"
    assert await outbox_rows(http_services, f"event/acme/{ev['idempotency_key']}") == []
    # A key that is not a plain name is not repeated back.
    odd = json.dumps(ev)[:-1] + ', "a\\u0007b": 1, "a\\u0007b": 2}'
    assert (await post_events(api, odd)).json()["field"] == "$.?"


async def test_a_batch_with_a_key_held_twice_is_refused_whole(
        api: httpx.AsyncClient, http_services: Services) -> None:
    # Splitting it would keep one value of the key: the post is refused as too deep is.
    good, bad = event(), event()
    body = "[" + json.dumps(good) + "," + json.dumps(bad)[:-1] + ', "x": 1, "x": 2}]'
    answer = await post_events(api, body)
    assert answer.status_code == 422, answer.text
    assert (answer.json()["field"], answer.json()["rule"]) == ("$[1].x", "duplicate_key")
    assert await outbox_rows(http_services, f"event/acme/{good['idempotency_key']}") == []
