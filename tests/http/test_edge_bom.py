"""A UTF-8 byte order mark before an event (what some Windows tools write) is refused, as RFC
8259 lets a parser do, but by name: "not valid JSON" sent a producer looking for a syntax error
that is not there. Refused, not stripped: the bytes the producer signed are the bytes read."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import httpx
import pytest
from cloudevents.core.bindings import http as ce_http
from cloudevents.core.formats.json import JSONFormat

from tests.http.cloudevents_support import cloud_event, post
from tests.http.conftest import post_events
from tests.http.edge_decisions_support import DECISION
from tests.http.events_support import event, outbox_rows
from tests.http.items_support import bearer
from tollgate.http import review_service as rs
from tollgate.http.deps import Services
from tollgate.http.precheck import precheck

BOM = "\ufeff"
SAID = "starts with a byte order mark (U+FEFF); send UTF-8 without it"


@pytest.mark.parametrize("batch", [False, True])
async def test_an_event_after_a_byte_order_mark_is_refused_naming_it(
        api: httpx.AsyncClient, http_services: Services, batch: bool) -> None:
    ev = event()
    body = (BOM + (json.dumps([ev]) if batch else json.dumps(ev))).encode()
    answer = await post_events(api, body)
    # Was 422 malformed_json "the event is not valid JSON" (queued, quarantined by the run).
    assert answer.status_code == 422, answer.text
    got = answer.json()
    assert (got["reason_code"], got["field"], got["rule"]) == (
        "malformed_json", "$", "byte_order_mark")
    assert got["message"] == f"$: {SAID}"
    detail = await http_services.pool.fetchval(
        "SELECT detail FROM quarantine WHERE workflow_id = $1", got["workflow_id"])
    assert detail == f"$: {SAID}"
    assert await outbox_rows(http_services, f"event/acme/{ev['idempotency_key']}") == []
    # The same bytes without it are the event.
    assert (await post_events(api, json.dumps(ev).encode())).status_code == 202


async def test_a_byte_order_mark_cannot_carry_a_key_held_twice_past_the_review_api(
        api: httpx.AsyncClient, http_services: Services, decided: list[rs.DecisionIn]
        ) -> None:
    """The edge's parse refused the mark as a syntax error and left the body to FastAPI,
    whose json.loads of bytes skips it: the key held twice reached the decision."""
    body = BOM + json.dumps(DECISION)[:-1] + ', "decision": "reject"}'
    answer = await api.post("/v1/reviews/event/acme/k-bom/decision", content=body.encode(),
                            headers={**bearer(http_services, "ann", role="care_lead"),
                                     "Content-Type": "application/json"})
    assert decided == []
    assert answer.status_code == 422, answer.text
    assert (answer.json()["field"], answer.json()["rule"]) == ("$", "byte_order_mark")


async def test_a_structured_cloudevent_after_a_byte_order_mark_is_refused_naming_it(
        api: httpx.AsyncClient) -> None:
    message = ce_http.to_structured(cloud_event(), JSONFormat())
    answer = await post(api, ce_http.HTTPMessage(message.headers, BOM.encode() + message.body))
    # Was "the body is not a CloudEvent in JSON".
    assert answer.status_code == 422, answer.text
    assert (answer.json()["reason_code"], answer.json()["message"]) == (
        "malformed_json", f"$: {SAID}")


def test_the_intake_check_names_a_byte_order_mark() -> None:
    checked = precheck(BOM + '{"tenant_id": "acme"}', "s3cret", datetime.now(UTC))
    assert (checked.reason_code, checked.message) == ("malformed_json", f"the event {SAID}")
    assert precheck("{nope", "s3cret", datetime.now(UTC)).message == "the event is not valid JSON"
