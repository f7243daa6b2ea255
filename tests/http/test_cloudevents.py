"""CloudEvents 1.0 on the webhook intake, in both HTTP modes, built with the ``cloudevents``
SDK (what a cloud event bus sends)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import httpx
from cloudevents.core.bindings import http as ce_http
from cloudevents.core.formats.json import JSONFormat
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.http.cloudevents_support import cloud_event, post
from tests.http.conftest import signed_headers
from tests.http.events_support import outbox_rows
from tollgate.http.deps import Services


async def stored_envelope(svc: Services, workflow_id: str) -> dict[str, Any]:
    rows = await outbox_rows(svc, workflow_id)
    assert len(rows) == 1
    found: dict[str, Any] = json.loads(rows[0]["raw"])
    return found


async def test_structured_mode_becomes_the_envelope(
        api: httpx.AsyncClient, http_services: Services) -> None:
    ce = cloud_event()
    answer = await post(api, ce_http.to_structured(ce, JSONFormat()))
    assert answer.status_code == 202, answer.text
    key = ce.get_extension("idempotencykey")
    assert answer.json()["workflow_id"] == f"event/acme/{key}"
    envelope = await stored_envelope(http_services, answer.json()["workflow_id"])
    assert envelope["event_id"] == ce.get_id()
    assert envelope["entity_id"] == ce.get_subject()
    assert envelope["schema_version"] == 3
    assert envelope["correlation_id"] == ce.get_extension("correlationid")
    assert envelope["payload"] == ce.get_data()
    assert datetime.fromisoformat(envelope["occurred_at"]) == ce.get_time()


async def test_binary_mode_signed_the_standard_webhooks_way(
        api: httpx.AsyncClient, http_services: Services) -> None:
    ce = cloud_event(idempotencykey=None)  # the key falls back to webhook-id
    message = ce_http.to_binary(ce, JSONFormat())
    assert "ce-specversion" in message.headers
    answer = await post(api, message, standard=True)
    assert answer.status_code == 202, answer.text
    assert answer.json()["workflow_id"].startswith("event/acme/msg_")
    again = await post(api, message)  # X-Tollgate scheme, no webhook-id: the event id is the key
    assert again.json()["workflow_id"] == f"event/acme/{ce.get_id()}"


async def test_repeat_is_a_duplicate(api: httpx.AsyncClient) -> None:
    message = ce_http.to_structured(cloud_event(), JSONFormat())
    assert (await post(api, message)).status_code == 202
    repeat = await post(api, message)
    assert (repeat.status_code, repeat.json()["status"]) == (200, "duplicate")


async def quarantined(svc: Services, workflow_id: str) -> str | None:
    found: str | None = await svc.pool.fetchval(
        "SELECT reason_code FROM quarantine WHERE workflow_id = $1", workflow_id)
    return found


async def test_lacking_what_the_envelope_needs_is_quarantined_with_a_reason(
        api: httpx.AsyncClient, http_services: Services) -> None:
    for missing, reason in (("subject", "cloudevent_incomplete"),
                            ("schemaversion", "cloudevent_incomplete")):
        message = ce_http.to_structured(cloud_event(**{missing: None}), JSONFormat())
        answer = await post(api, message)
        assert answer.status_code == 422, answer.text
        body = answer.json()
        assert (body["reason_code"], body["state"]) == (reason, "QUARANTINED")
        assert missing in body["message"]
        assert await quarantined(http_services, body["workflow_id"]) == reason
    # The SDK would invent an id and a time; Tollgate refuses instead.
    structured = json.loads(ce_http.to_structured(cloud_event(), JSONFormat()).body)
    for name in ("id", "time"):
        raw = json.dumps({k: v for k, v in structured.items() if k != name}).encode()
        answer = await post(api, ce_http.HTTPMessage(
            {"content-type": "application/cloudevents+json"}, raw))
        assert answer.json()["reason_code"] == "cloudevent_incomplete", name
    binary = ce_http.to_binary(cloud_event(), JSONFormat())
    no_time = {k: v for k, v in binary.headers.items() if k != "ce-time"}
    answer = await post(api, ce_http.HTTPMessage(no_time, binary.body))
    assert answer.json()["reason_code"] == "cloudevent_incomplete"


async def test_not_a_cloudevent_is_quarantined_bad_cloudevent(
        api: httpx.AsyncClient, http_services: Services) -> None:
    structured = json.loads(ce_http.to_structured(cloud_event(), JSONFormat()).body)
    cases = [b"{not json", b"[1, 2]",
             json.dumps({**structured, "specversion": "9.9"}).encode(),
             json.dumps({k: v for k, v in structured.items() if k != "source"}).encode(),
             json.dumps({**structured, "time": "yesterday"}).encode()]
    for raw in cases:
        answer = await post(api, ce_http.HTTPMessage(
            {"content-type": "application/cloudevents+json"}, raw))
        assert answer.status_code == 422, (raw, answer.text)
        assert answer.json()["reason_code"] == "bad_cloudevent", raw
        assert await quarantined(http_services, answer.json()["workflow_id"]) == "bad_cloudevent"


async def test_a_schemaversion_python_calls_digits_but_no_number_is_quarantined(
        api: httpx.AsyncClient) -> None:
    """``²`` and 5,000 digits pass ``str.isdigit``; ``int()`` refuses both, which was a 500.
    They stay text and are refused as the envelope's schema_version, in either mode."""
    def structured(version: str) -> ce_http.HTTPMessage:
        raw = json.loads(ce_http.to_structured(cloud_event(), JSONFormat()).body)
        return ce_http.HTTPMessage({"content-type": "application/cloudevents+json"},
                                   json.dumps({**raw, "schemaversion": version}).encode())

    binary = ce_http.to_binary(cloud_event(), JSONFormat())
    answers = [await post(api, structured("\u00b2")), await post(api, structured("9" * 5000)),
               await post(api, ce_http.HTTPMessage(
                   {**binary.headers, "ce-schemaversion": "9" * 5000}, binary.body))]
    # A header arrives as Latin-1 bytes: ``²`` is the byte B2 (httpx sends str as ASCII).
    binary = ce_http.to_binary(cloud_event(), JSONFormat())
    answers.append(await api.post("/v1/events", content=binary.body, headers={
        **signed_headers(binary.body), **binary.headers, "ce-schemaversion": b"\xb2"}))
    for answer in answers:
        assert answer.status_code == 422, answer.text
        assert answer.json()["reason_code"] == "bad_envelope"
        assert "schema_version" in answer.json()["message"]


async def test_batch_mode_is_refused_saying_so_and_quarantined(
        api: httpx.AsyncClient, http_services: Services) -> None:
    """Batch mode was read as Tollgate's own batch: each CloudEvent answered ``bad_envelope``
    ("event_id: missing; event_type: missing; ..."), which it has under other names."""
    one = json.loads(ce_http.to_structured(cloud_event(), JSONFormat()).body)
    answer = await post(api, ce_http.HTTPMessage(
        {"content-type": "application/cloudevents-batch+json; charset=utf-8"},
        json.dumps([one]).encode()))
    assert answer.status_code == 422, answer.text
    body = answer.json()
    assert (body["reason_code"], body["state"]) == ("bad_cloudevent", "QUARANTINED")
    assert "batch" in body["message"]
    assert await quarantined(http_services, body["workflow_id"]) == "bad_cloudevent"


async def test_a_cloudevent_naming_another_tenant_is_403(api: httpx.AsyncClient) -> None:
    message = ce_http.to_structured(cloud_event(tenant="globex"), JSONFormat())
    answer = await post(api, message)
    assert (answer.status_code, answer.json()["code"]) == (403, "cross_tenant")


async def test_a_mapped_event_is_checked_like_any_other(api: httpx.AsyncClient) -> None:
    message = ce_http.to_structured(cloud_event(schemaversion="9"), JSONFormat())
    answer = await post(api, message)
    assert (answer.status_code, answer.json()["reason_code"]) == (422, "unknown_schema")
    wrong_type = ce_http.to_structured(cloud_event(type="com.example.care"), JSONFormat())
    assert (await post(api, wrong_type)).json()["reason_code"] == "bad_envelope"


_header_text = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=40)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.binary(max_size=200), attributes=st.dictionaries(
    st.sampled_from(["ce-id", "ce-source", "ce-type", "ce-time", "ce-subject",
                     "ce-schemaversion", "ce-tenant", "content-type"]), _header_text))
async def test_signed_arbitrary_binary_cloudevents_are_answered_never_5xx(
        api: httpx.AsyncClient, body: bytes, attributes: dict[str, str]) -> None:
    """Both routes: an answer below 500 with a JSON body, whatever the headers and bytes."""
    # The standardwebhooks library signs text only: bytes that are not UTF-8 go the other way.
    for standard in (False, True) if body.decode("utf-8", "ignore").encode() == body else (False,):
        message = ce_http.HTTPMessage({"ce-specversion": "1.0", **attributes}, body)
        answer = await post(api, message, standard=standard)
        assert answer.status_code < 500, answer.text
        answer.json()


async def test_a_cloudevent_holding_a_key_twice_is_quarantined_duplicate_key(
        api: httpx.AsyncClient, http_services: Services) -> None:
    message = ce_http.to_structured(cloud_event(), JSONFormat())
    body = message.body[:-1] + b', "subject": "C-2", "subject": "C-1"}'
    answer = await post(api, ce_http.HTTPMessage(message.headers, body))
    assert answer.status_code == 422, answer.text
    assert (answer.json()["reason_code"], answer.json()["state"]) == (
        "duplicate_key", "QUARANTINED")
