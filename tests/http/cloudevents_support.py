"""For the CloudEvents tests: an event in CloudEvents form, and a post of one."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx
from cloudevents.core.bindings import http as ce_http
from cloudevents.core.v1.event import CloudEvent

from tests.http.conftest import signed_headers
from tests.http.events_support import event
from tests.http.webhooks_support import sender, webhook_headers


def cloud_event(**attributes: Any) -> CloudEvent:
    ev = event()
    base: dict[str, Any] = {
        "id": ev["event_id"], "source": "crm-scheduler", "type": "CARE_DUE",
        "time": datetime.now(UTC), "subject": ev["entity_id"], "schemaversion": "3",
        "tenant": "acme", "correlationid": ev["correlation_id"],
        "idempotencykey": ev["idempotency_key"], "datacontenttype": "application/json"}
    attrs = {k: v for k, v in {**base, **attributes}.items() if v is not None}
    return CloudEvent(attrs, ev["payload"])


async def post(api: httpx.AsyncClient, message: ce_http.HTTPMessage,
               standard: bool = False) -> httpx.Response:
    signing = webhook_headers(message.body, sender()) if standard else signed_headers(message.body)
    headers = {k.lower(): v for k, v in {**signing, **message.headers}.items()}
    if standard:
        return await api.post("/v1/events/acme", content=message.body, headers=headers)
    return await api.post("/v1/events", content=message.body, headers=headers)
