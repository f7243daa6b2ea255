"""Generated input against the OpenAPI document's operations: never a 500 (or any crash).

Hypothesis builds bodies, headers and ids; the signed cases pass the HMAC so that the
generated events reach the envelope checks and the outbox, where the interesting code is.
503 is allowed only where the document says Temporal may be unreachable (it is, here)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import fresh_key
from tests.http.conftest import post_events, signed_headers
from tollgate.dev.demo import care_due
from tollgate.http.deps import Services
from tollgate.runtime.identity import issue_dev_token

FUZZ = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12)
#: httpx's ``json=`` (like a strict client) refuses infinities, so the review calls get none.
strict_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12)
ENVELOPE_FIELDS = ["event_id", "event_type", "source", "tenant_id", "entity_id",
                   "schema_version", "occurred_at", "correlation_id", "idempotency_key",
                   "payload", "signature"]


def assert_handled(answer: httpx.Response, *, documented: set[int]) -> None:
    assert answer.status_code < 500 or answer.status_code in documented, answer.text
    answer.json()  # every answer is a JSON body a client can read


async def test_openapi_operations_are_the_fuzzed_ones(api: httpx.AsyncClient) -> None:
    paths = (await api.get("/openapi.json")).json()["paths"]
    assert set(paths) == {"/v1/events", "/v1/events/{tenant}", "/v1/reviews",
                          "/v1/reviews/{workflow_id}", "/v1/reviews/{workflow_id}/decision",
                          "/v1/items", "/v1/items/{item_id}/retry", "/healthz", "/readyz"}


@FUZZ
@given(body=json_values)
async def test_signed_arbitrary_json_never_crashes(api: httpx.AsyncClient, body: Any) -> None:
    assert_handled(await post_events(api, json.dumps(body)), documented=set())


@FUZZ
@given(body=st.binary(max_size=300))
async def test_signed_arbitrary_bytes_are_answered_and_kept(
        api: httpx.AsyncClient, http_services: Services, body: bytes) -> None:
    answer = await post_events(api, body)
    assert_handled(answer, documented=set())
    assert answer.status_code in (200, 202, 403, 409, 422)
    # Kept: whatever was answered for a workflow (accepted, duplicate, invalid) has its outbox
    # row, so the workflow runs or quarantines it, or (text refused at the edge) its quarantine
    # row already; nothing posted is dropped.
    workflow_id = answer.json().get("workflow_id")
    if answer.status_code in (200, 202, 422) and workflow_id:
        assert await http_services.pool.fetchval(
            "SELECT (SELECT count(*) FROM outbox WHERE workflow_id = $1)"
            " + (SELECT count(*) FROM quarantine WHERE workflow_id = $1)", workflow_id) >= 1


@FUZZ
@given(field=st.sampled_from(ENVELOPE_FIELDS), value=json_values)
async def test_signed_envelope_with_one_odd_field_never_crashes(
        api: httpx.AsyncClient, field: str, value: Any) -> None:
    event = care_due("acme", "C-1001", fresh_key("k"), now=datetime.now(UTC))
    answer = await post_events(api, {**event, field: value})
    assert_handled(answer, documented=set())
    if field != "tenant_id":
        assert answer.status_code in (202, 422)


@FUZZ
@given(body=st.binary(max_size=300), headers=st.dictionaries(
    st.sampled_from(["X-Tollgate-Tenant", "X-Tollgate-Timestamp", "X-Tollgate-Signature"]),
    st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=80)))
async def test_unsigned_or_badly_signed_posts_are_refused(
        api: httpx.AsyncClient, body: bytes, headers: dict[str, str]) -> None:
    answer = await api.post("/v1/events", content=body, headers=headers)
    assert_handled(answer, documented=set())
    assert answer.status_code in (401, 403)


@FUZZ
@given(workflow_id=st.text(min_size=1, max_size=60).filter(lambda s: not s.startswith("/")),
       decision=st.dictionaries(st.sampled_from(["decision", "reason", "request_id",
                                                 "draft_version"]), strict_json))
async def test_review_calls_with_odd_ids_and_bodies_never_crash(
        api: httpx.AsyncClient, http_services: Services, workflow_id: str,
        decision: dict[str, Any]) -> None:
    raw = issue_dev_token(http_services.settings.state_dir, reviewer="lan.nguyen",
                          role="care_lead", tenant="acme")
    auth = {"Authorization": f"Bearer {raw}"}
    path = "/v1/reviews/" + quote(workflow_id, safe="/")
    assert_handled(await api.get(path, headers=auth), documented={503})
    assert_handled(await api.post(path + "/decision", json=decision, headers=auth),
                   documented={503})
    assert_handled(await api.get("/v1/reviews", headers={"Authorization": f"Bearer {path}"}),
                   documented=set())


@FUZZ
@given(item=st.dictionaries(st.sampled_from(["url", "title", "description", "text", "user_id"]),
                            strict_json))
async def test_item_saves_with_odd_bodies_never_crash(
        api: httpx.AsyncClient, http_services: Services, item: dict[str, Any]) -> None:
    raw = issue_dev_token(http_services.settings.state_dir, reviewer="fuzz.user",
                          role="reader", tenant="acme")
    answer = await api.post("/v1/items", json=item, headers={"Authorization": f"Bearer {raw}"})
    assert_handled(answer, documented=set())
    assert answer.status_code in (200, 201, 422)


@FUZZ
@given(item_id=st.text(max_size=40) | st.integers().map(str))
async def test_item_retries_with_odd_ids_never_crash(
        api: httpx.AsyncClient, http_services: Services, item_id: str) -> None:
    raw = issue_dev_token(http_services.settings.state_dir, reviewer="fuzz.user",
                          role="reader", tenant="acme")
    answer = await api.post("/v1/items/" + quote(item_id, safe="") + "/retry",
                            headers={"Authorization": f"Bearer {raw}"})
    assert_handled(answer, documented={503})
    # Nobody's item: refused as missing or malformed, never a retry started.
    assert answer.status_code in (404, 405, 422, 503), answer.text


async def test_signed_headers_helper_matches_the_service(api: httpx.AsyncClient) -> None:
    """Guards the fuzzing above: a correctly signed valid event is accepted."""
    event = care_due("acme", "C-1001", fresh_key("k"), now=datetime.now(UTC))
    body = json.dumps(event).encode()
    answer = await api.post("/v1/events", content=body, headers=signed_headers(body))
    assert answer.status_code == 202


async def test_temporal_lost_after_connecting_is_503_and_reconnects(
        api: httpx.AsyncClient, http_services: Services) -> None:
    from temporalio.service import RPCError, RPCStatusCode

    class Gone:
        def list_workflows(self, query: str) -> Any:
            raise RPCError("connection lost", RPCStatusCode.UNAVAILABLE, b"")

    http_services.temporal._client = Gone()  # type: ignore[assignment]
    raw = issue_dev_token(http_services.settings.state_dir, reviewer="lan.nguyen",
                          role="care_lead", tenant="acme")
    answer = await api.get("/v1/reviews", headers={"Authorization": f"Bearer {raw}"})
    assert answer.status_code == 503
    assert http_services.temporal._client is None  # the next call connects afresh
