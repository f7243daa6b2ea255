"""The OpenAPI document against the service's answers (issue 29, item 6): schemathesis builds
cases from ``/openapi.json`` (read in-process from the ASGI app), each is sent to the app with
what the route needs to get past its door (a producer's signature, a reviewer's token), and
every answer must match what the document declares for its status, and be no server error.

Temporal is unreachable in this fixture, so a 503 is allowed where the document declares one.
Bounded: a few examples per operation and mode, about a minute for all of them."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core import NotSet
from schemathesis.specs.openapi.checks import response_schema_conformance
from standardwebhooks.webhooks import Webhook

from tests.conftest import TENANT_SECRETS
from tests.http.conftest import signed_headers
from tests.http.webhooks_support import webhook_headers
from tollgate.http.app import create_app
from tollgate.http.deps import Services
from tollgate.http.webhook_auth import standard_secret
from tollgate.runtime.identity import issue_dev_token

CASES = settings(max_examples=8, deadline=None, derandomize=True,
                 suppress_health_check=list(HealthCheck))
OPERATIONS = [("POST", "/v1/events"), ("POST", "/v1/events/{tenant}"), ("GET", "/v1/reviews"),
              ("GET", "/v1/reviews/{workflow_id}"), ("POST", "/v1/reviews/{workflow_id}/decision"),
              ("POST", "/v1/items"), ("POST", "/v1/items/{item_id}/retry"), ("GET", "/healthz"),
              ("GET", "/readyz")]


@pytest.fixture(scope="module")
def schema(http_services: Services) -> Any:
    return schemathesis.openapi.from_asgi("/openapi.json", create_app(http_services))


def test_every_operation_of_the_document_is_checked(schema: Any) -> None:
    listed = {(r.ok().method.upper(), r.ok().path) for r in schema.get_all_operations()}
    assert listed == set(OPERATIONS)


def door(svc: Services, path: str, raw: bytes) -> dict[str, str]:
    """What gets a case past the route's door; what it generated itself is kept otherwise."""
    if path == "/v1/events":
        return signed_headers(raw)
    if path.startswith("/v1/events/"):
        if not is_text(raw):
            return {}  # the library signs text only: such a body is refused unsigned, 401
        return webhook_headers(raw, Webhook(standard_secret(TENANT_SECRETS["acme"])))
    if path.startswith(("/v1/reviews", "/v1/items")):
        token = issue_dev_token(svc.settings.state_dir, reviewer="lan.nguyen",
                                role="care_lead", tenant="acme")
        return {"Authorization": f"Bearer {token}"}
    return {}


def is_text(raw: bytes) -> bool:
    try:
        raw.decode()
    except UnicodeDecodeError:
        return False
    return True


def body_bytes(body: Any) -> bytes:
    """A negative case's body may be bytes or text already; anything else is sent as JSON. An
    operation without a body (the item retry) has none."""
    if body is None or isinstance(body, NotSet):
        return b""
    if isinstance(body, bytes):
        return body
    return body.encode() if isinstance(body, str) else json.dumps(body).encode()


@pytest.mark.parametrize(("method", "path", "mode"), [
    (method, path, mode) for method, path in OPERATIONS
    # Negative cases need something to get wrong: a body (a GET's string ids take anything).
    for mode in ([GenerationMode.POSITIVE, GenerationMode.NEGATIVE] if method == "POST"
                 else [GenerationMode.POSITIVE])])
@CASES
@given(data=st.data())
async def test_answers_match_the_document(
        api: httpx.AsyncClient, http_services: Services, schema: Any, method: str, path: str,
        mode: GenerationMode, data: st.DataObject) -> None:
    operation = schema[path][method]
    case = data.draw(operation.as_strategy(generation_mode=mode))
    url = case.formatted_path
    if path == "/v1/events/{tenant}":
        url = "/v1/events/acme"  # a known tenant, or every case is the same 403
    raw = body_bytes(case.body) if method == "POST" else b""
    headers = {k: v for k, v in (case.headers or {}).items() if isinstance(v, str)}
    headers = {**headers, **door(http_services, path, raw)}
    if raw:
        headers.setdefault("Content-Type", "application/json")
    answer = await api.request(method, url, params=case.query, content=raw or None,
                               headers=headers)
    checks = [response_schema_conformance]
    declared = set(operation.definition.raw.get("responses", {}))
    if not (answer.status_code == 503 and "503" in declared):
        checks.append(not_a_server_error)
    case.validate_response(answer, checks=checks)
