"""Intake refuses an idempotency key that looks like a customer's contact, with the reason."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from temporalio.client import Client

from contracts import EventState
from policies.signing import sign_json
from tests.conftest import TENANT_SECRETS, fresh_key, signed_event, start
from tollgate.dev.demo import care_due


async def test_a_phone_number_as_idempotency_key_is_quarantined_with_a_reason(
    worker_client: tuple[Client, str],
) -> None:
    client, queue = worker_client
    outcome = await (await start(client, queue, signed_event(key="0912.345.678"))).result()
    assert outcome.state == EventState.QUARANTINED
    assert outcome.reason_code == "personal_data_in_key"


async def test_an_email_as_idempotency_key_is_refused_before_anything_else(
    worker_client: tuple[Client, str],
) -> None:
    client, queue = worker_client
    event = care_due("acme", "C-1001", fresh_key("k"), now=datetime.now(UTC))
    event["idempotency_key"] = "lan.nguyen@example.vn"
    outcome = await (await start(client, queue, sign_json(json.dumps(event),
                                                          TENANT_SECRETS))).result()
    assert outcome.state == EventState.QUARANTINED
    assert outcome.reason_code == "personal_data_in_key"
