"""Decision posts with hostile paths and bodies, answered at the edge before PostgreSQL or
Temporal is asked: a 4xx naming what was wrong, never a 500."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.http.edge_decisions_support import CSRF, DECISION
from tests.http.items_support import bearer
from tollgate.http import review_service as rs
from tollgate.http.deps import Services


@pytest.mark.parametrize("workflow_id", ["%00", "event/acme/k%00", "a%01b"])
async def test_a_keyed_decision_for_an_id_that_cannot_be_a_review_is_404(
        api: httpx.AsyncClient, http_services: Services, workflow_id: str) -> None:
    # The key is kept by a route naming the workflow id: a NUL there reached PostgreSQL (500).
    headers = {**bearer(http_services, "ann", role="care_lead"), "Idempotency-Key": "k-edge"}
    answer = await api.post(f"/v1/reviews/{workflow_id}/decision", json=DECISION,
                            headers=headers)
    assert answer.status_code == 404, answer.text
    kept = await http_services.pool.fetchval(
        "SELECT count(*) FROM idempotency_keys WHERE key = 'k-edge'")
    assert kept == 0


@pytest.mark.parametrize(("body", "rule"), [
    (b'{"decision": "approve", "reason": ' + b"[" * 3000 + b"]" * 3000 + b"}", "too_deep"),
    (b'{"decision": "approve", "reason": "ok", "request_id": "r-1", "draft_version": '
     + b"9" * 5000 + b"}", "number_too_large"),
    (b'{"decision": "approve", "reason": "\xff\xfe", "request_id": "r-1", "draft_version": 1}',
     "not_json"),
])
@pytest.mark.parametrize("path", ["/v1/reviews/event/acme/k-1/decision", "/v1/items"])
async def test_a_body_json_cannot_read_is_422_naming_the_rule(
        api: httpx.AsyncClient, http_services: Services, body: bytes, rule: str,
        path: str) -> None:
    # FastAPI answered these 400 "There was an error parsing the body", naming nothing.
    answer = await api.post(path, content=body, headers={
        **bearer(http_services, "ann", role="care_lead"), "Content-Type": "application/json"})
    assert answer.status_code == 422, answer.text
    assert answer.json()["rule"] == rule
    assert answer.json()["field"] == ("$.draft_version" if rule == "number_too_large" else "$")
    assert "9999" not in answer.text


@pytest.mark.parametrize(("change", "field"), [
    ({"draft_version": True}, "$.draft_version"),  # was taken as version 1
    ({"draft_version": 1.0}, "$.draft_version"),
    ({"draft_version": 1.5}, "$.draft_version"),
    ({"draft_version": "1"}, "$.draft_version"),
    ({"rol": "care_lead"}, "$.rol"),  # ignored: decided in the token's default role
])
async def test_a_decision_is_taken_as_sent_or_refused_naming_the_field(
        api: httpx.AsyncClient, http_services: Services, change: dict[str, object],
        field: str) -> None:
    answer = await api.post("/v1/reviews/event/acme/k-strict/decision",
                            json={**DECISION, **change},
                            headers=bearer(http_services, "ann", role="care_lead"))
    assert answer.status_code == 422, answer.text
    assert (answer.json()["code"], answer.json()["field"]) == ("invalid_request", field)


async def post_inbox_form(api: httpx.AsyncClient, svc: Services, form: str) -> httpx.Response:
    """A decision form's post, signed in as ann with a CSRF cookie its ``csrf`` field matches."""
    token = bearer(svc, "ann", role="care_lead")["Authorization"][7:]
    return await api.post("/inbox/review/event%2Facme%2Fk-strict/decision", content=form,
                          headers={"Content-Type": "application/x-www-form-urlencoded",
                                   "Cookie": f"tollgate_token={token}; tollgate_csrf={CSRF}"})


@pytest.mark.parametrize("version", ["1.0", "1_0", "%2B1", "%201", "true", "1.5"])
async def test_an_inbox_draft_version_that_is_not_plain_digits_is_refused(
        api: httpx.AsyncClient, http_services: Services, version: str) -> None:
    # pydantic's lax int read "1_0" as 10 and " 1", "+1", "1.0" as 1.
    form = f"csrf={CSRF}&decision=approve&reason=ok&request_id=r-1&draft_version={version}"
    answer = await post_inbox_form(api, http_services, form)
    assert answer.status_code == 422, answer.text
    assert answer.json()["detail"].startswith("draft_version: ")


@pytest.mark.parametrize(("form", "named"), [
    ("decision=approve&decision=reject", "decision"),
    ("decision=reject&decision=approve", "decision"),
    ("decision=approve&draft_version=1&draft_version=2", "draft_version"),
    ("decision=approve&role=care_lead&role=compliance", "role"),
    ("decision=approve&x%00=1&x%00=2", "a field this form does not have"),
])
async def test_an_inbox_field_sent_twice_is_refused_and_nothing_is_decided(
        api: httpx.AsyncClient, http_services: Services, decided: list[rs.DecisionIn],
        form: str, named: str) -> None:
    base = f"csrf={CSRF}&reason=ok&request_id=r-1"
    base += "" if "draft_version" in form else "&draft_version=1"
    answer = await post_inbox_form(api, http_services, f"{base}&{form}")
    # Starlette's form keeps every value and .get() answered the last one: the decision was
    # made on one of two values the page never sends together.
    assert decided == []
    assert answer.status_code == 422, answer.text
    assert answer.json()["detail"] == f"{named}: sent more than once; nothing was decided"


@pytest.mark.parametrize(("body", "field"), [
    ('{"decision": "approve", "reason": "ok", "request_id": "r-1", "draft_version": 1, '
     '"decision": "reject"}', "$.decision"),
    ('{"decision": "approve", "reason": "ok", "request_id": "r-1", "draft_version": 1, '
     '"draft_version": 2}', "$.draft_version"),
    ('{"decision": "approve", "reason": "ok", "request_id": "r-1", "draft_version": 1, '
     '"a\\u0000": 1, "a\\u0000": 2}', "$.?"),
])
async def test_an_api_decision_holding_a_key_twice_is_refused_and_nothing_is_decided(
        api: httpx.AsyncClient, http_services: Services, decided: list[rs.DecisionIn],
        body: str, field: str) -> None:
    answer = await api.post("/v1/reviews/event/acme/k-twice/decision", content=body.encode(),
                            headers={**bearer(http_services, "ann", role="care_lead"),
                                     "Content-Type": "application/json"})
    # json.loads keeps a key's last value: the workflow was sent "reject" (or version 2).
    assert decided == []
    assert answer.status_code == 422, answer.text
    assert (answer.json()["field"], answer.json()["rule"]) == (field, "duplicate_key")
    assert "\\u0000" not in answer.text


async def test_an_item_holding_a_key_twice_is_refused_and_nothing_is_saved(
        api: httpx.AsyncClient, http_services: Services) -> None:
    url = "https://example.com/edge/twice"
    body = f'{{"url": "{url}", "title": "a", "title": "b"}}'
    answer = await api.post("/v1/items", content=body.encode(), headers={
        **bearer(http_services, "u-twice"), "Content-Type": "application/json"})
    assert answer.status_code == 422, answer.text
    assert (answer.json()["field"], answer.json()["rule"]) == ("$.title", "duplicate_key")
    saved = await http_services.pool.fetchval("SELECT count(*) FROM items WHERE url = $1", url)
    assert saved == 0


@pytest.mark.parametrize("body", [
    b'{"decision": ',  # FastAPI's own json_invalid, with its position
    b'{"decision": "approve", "reason": ' + b"[" * 3000 + b"]" * 3000 + b"}",
    b'{"decision": "\xff"}',
    b'{"decision": "approve", "decision": "reject"}',
], ids=["syntax", "too_deep", "not_utf8", "duplicate_key"])
@pytest.mark.parametrize("auth", [{}, {"Authorization": "Bearer not-a-token"}],
                         ids=["no_token", "bad_token"])
@pytest.mark.parametrize("path", ["/v1/reviews/event/acme/k-1/decision", "/v1/items"])
async def test_an_unauthenticated_caller_hears_401_and_nothing_about_its_body(
        api: httpx.AsyncClient, body: bytes, auth: dict[str, str], path: str) -> None:
    # The models' refusals already came after the token; these were answered 422 before it.
    answer = await api.post(path, content=body,
                            headers={**auth, "Content-Type": "application/json"})
    assert answer.status_code == 401, answer.text
    assert answer.headers["WWW-Authenticate"] == "Bearer"
    assert "rule" not in answer.json() and "$" not in answer.text


@pytest.mark.parametrize("key", ["a\\u0000", "a\\u001b[2J", "k" * 5000])
@pytest.mark.parametrize("path", ["/v1/reviews/event/acme/k-1/decision", "/v1/items"])
async def test_an_unknown_key_is_refused_without_repeating_it(
        api: httpx.AsyncClient, http_services: Services, key: str, path: str) -> None:
    # extra_forbidden named the key as sent: a control character, or 5,000 characters twice.
    known = json.dumps(DECISION if "reviews" in path else
                       {"url": "https://example.com/edge/key", "title": "t"})
    body = known[:-1] + f', "{key}": 1}}'
    answer = await api.post(path, content=body.encode(), headers={
        **bearer(http_services, "ann", role="care_lead"), "Content-Type": "application/json"})
    assert answer.status_code == 422, answer.text
    assert (answer.json()["field"], answer.json()["rule"]) == ("$.?", "extra_forbidden")
    assert answer.json()["detail"][0]["loc"] == ["body", "?"]
    assert "\\u00" not in answer.text and "kkkk" not in answer.text
