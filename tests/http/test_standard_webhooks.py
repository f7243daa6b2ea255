"""Standard Webhooks 1.0 on ``POST /v1/events/{tenant}``, signed by the ``standardwebhooks``
library itself (what a Svix-style sender runs)."""

from __future__ import annotations

import json
import secrets
import time
from typing import Any

import httpx
import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from tests.conftest import TENANT_SECRETS, fresh_key
from tests.http.events_support import event, outbox_rows
from tests.http.webhooks_support import sender, webhook_headers
from tollgate.http.deps import Services
from tollgate.http.webhook_auth import standard_secret


async def post(api: httpx.AsyncClient, body: Any, tenant: str = "acme",
               headers: dict[str, str] | None = None) -> httpx.Response:
    raw = json.dumps(body).encode()
    return await api.post(f"/v1/events/{tenant}", content=raw,
                          headers=headers or webhook_headers(raw, sender(tenant)))


async def test_event_signed_by_the_library_is_accepted_and_queued(
        api: httpx.AsyncClient, http_services: Services) -> None:
    ev = event()
    answer = await post(api, ev)
    assert answer.status_code == 202, answer.text
    assert answer.json()["workflow_id"] == f"event/acme/{ev['idempotency_key']}"
    assert len(await outbox_rows(http_services, answer.json()["workflow_id"])) == 1


async def test_webhook_id_is_the_key_when_the_body_has_none(
        api: httpx.AsyncClient, http_services: Services) -> None:
    ev = event()
    del ev["idempotency_key"]
    raw = json.dumps(ev).encode()
    msg_id = fresh_key("msg")
    first = await api.post("/v1/events/acme", content=raw,
                           headers=webhook_headers(raw, sender(), msg_id=msg_id))
    assert first.status_code == 202, first.text
    assert first.json()["workflow_id"] == f"event/acme/{msg_id}"
    # The sender retries the same delivery (a new timestamp, the same id): a duplicate.
    retry = await api.post("/v1/events/acme", content=raw, headers=webhook_headers(
        raw, sender(), msg_id=msg_id, ts=int(time.time()) - 30))
    assert retry.status_code == 200
    assert retry.json()["status"] == "duplicate"


async def test_rotation_old_and_new_signatures_in_one_header(api: httpx.AsyncClient) -> None:
    """During a rotation the sender signs with both keys: the service, holding either one,
    accepts; a malformed entry in front does not hide a good one."""
    raw = json.dumps(event()).encode()
    retired = Webhook(standard_secret(secrets.token_hex(16)))
    headers = webhook_headers(raw, retired, sender())
    headers["webhook-signature"] = "v1,not-base64!! v2,abc " + headers["webhook-signature"]
    answer = await api.post("/v1/events/acme", content=raw, headers=headers)
    assert answer.status_code == 202, answer.text


async def test_whsec_tenant_secret_is_used_as_given(
        api: httpx.AsyncClient, http_services: Services) -> None:
    whsec = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    http_services.tenant_secrets = {**http_services.tenant_secrets, "initech": whsec}
    try:
        raw = json.dumps(event("initech")).encode()
        answer = await api.post("/v1/events/initech", content=raw,
                                headers=webhook_headers(raw, Webhook(whsec)))
        assert answer.status_code == 202, answer.text
    finally:
        http_services.tenant_secrets = TENANT_SECRETS


async def test_refusals(api: httpx.AsyncClient) -> None:
    raw = json.dumps(event()).encode()
    wrong_key = await api.post("/v1/events/acme", content=raw, headers=webhook_headers(
        raw, Webhook(standard_secret(secrets.token_hex(16)))))
    assert (wrong_key.status_code, wrong_key.json()["code"]) == (401, "bad_signature")
    other_tenant = await api.post("/v1/events/globex", content=raw,
                                  headers=webhook_headers(raw, sender("acme")))
    assert other_tenant.status_code == 401
    stale = await api.post("/v1/events/acme", content=raw, headers=webhook_headers(
        raw, sender(), ts=int(time.time()) - 301))
    assert (stale.status_code, stale.json()["code"]) == (401, "stale_timestamp")
    future = await api.post("/v1/events/acme", content=raw, headers=webhook_headers(
        raw, sender(), ts=int(time.time()) + 301))
    assert future.json()["code"] == "stale_timestamp"
    tampered = webhook_headers(raw, sender())
    changed = await api.post("/v1/events/acme", content=raw.replace(b"sms", b"sma"),
                             headers=tampered)
    assert (changed.status_code, changed.json()["code"]) == (401, "bad_signature")
    unknown = await api.post("/v1/events/nobody", content=raw,
                             headers=webhook_headers(raw, sender()))
    assert (unknown.status_code, unknown.json()["code"]) == (403, "unknown_tenant")
    bare = await api.post("/v1/events/acme", content=raw)
    assert (bare.status_code, bare.json()["code"]) == (401, "signature_missing")


@pytest.mark.parametrize("stamp", [b"\xb2\xb3", b"9" * 5000], ids=["superscript", "5000 digits"])
async def test_a_timestamp_python_calls_digits_but_no_number_is_401(
        api: httpx.AsyncClient, stamp: bytes) -> None:
    """``²³`` (Latin-1, as a header byte arrives) passes ``str.isdigit`` and 5,000 digits pass
    it too; ``int()`` refuses both, which was a 500."""
    raw = json.dumps(event()).encode()
    headers: dict[str, Any] = {**webhook_headers(raw, sender()), "webhook-timestamp": stamp}
    answer = await api.post("/v1/events/acme", content=raw, headers=headers)
    assert (answer.status_code, answer.json()["code"]) == (401, "bad_timestamp")


async def test_an_event_naming_another_tenant_is_403(api: httpx.AsyncClient) -> None:
    answer = await post(api, event("globex"), tenant="acme")
    assert (answer.status_code, answer.json()["code"]) == (403, "cross_tenant")


async def test_outgoing_notice_is_signed_and_verifies_with_the_library(tmp_path: Any) -> None:
    from tollgate.http.notifier import load_channels

    seen: list[httpx.Request] = []

    def hook(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200)

    (tmp_path / "notify.json").write_text(json.dumps(
        {"acme": {"slack_webhook": "https://hooks.example.test/T1"}}))
    async with httpx.AsyncClient(transport=httpx.MockTransport(hook)) as client:
        channel = load_channels(tmp_path / "notify.json", client, TENANT_SECRETS)["acme"]
        await channel.send("review waiting")
        await channel.send("review waiting")
    first, again = seen
    assert sender().verify(first.content, dict(first.headers)) == {"text": "review waiting"}
    assert first.headers["webhook-id"] == again.headers["webhook-id"]  # one message, twice
    stranger = Webhook(standard_secret(secrets.token_hex(16)))
    with pytest.raises(WebhookVerificationError):
        stranger.verify(first.content, dict(first.headers))
