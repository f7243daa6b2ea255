"""A valid event after a burst of hostile ones still reaches its workflow (issue 25), end to end:
the HTTP intake in process, its outbox relay running beside it as `tollgate serve` runs it, a
worker, and the real Temporal dev server.

The burst: NUL, lone surrogates, nesting 1,000 deep, an over-long key, a number past any type, a
bad transport signature, and events whose text passes the edge but not the workflow's checks
(unknown schema version, an idempotency key past the id pattern: refused 422 too, and sent on
to their quarantine by the relay). Each is refused with a 4xx, and each the service kept ends
with one quarantine row (or one row moved aside in the outbox). The valid event posted after
them, and once more, gets one run on Temporal that reaches AWAITING_REVIEW, one outbox row,
one events row.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

import httpx
import pytest
from temporalio.client import WorkflowExecution, WorkflowExecutionStatus
from temporalio.testing import WorkflowEnvironment

from adapters.postgres.pool import create_pool
from contracts import EventState
from tests.conftest import TENANT_SECRETS, fresh_key, worker_settings
from tests.eventually import eventually
from tests.http.conftest import http_settings, signed_headers
from tollgate.dev.demo import care_due
from tollgate.dev.standins import StandIns
from tollgate.http.app import create_app
from tollgate.http.deps import Services, TemporalLink
from tollgate.http.ratelimit import TenantRateLimiter
from tollgate.http.relay import RelayPolicy, run_relay
from tollgate.runtime.identity import verifier_from_settings
from tollgate.runtime.workers import draft_worker, main_worker

pytestmark = pytest.mark.e2e

#: Bounds on waiting, not assertions on speed.
SETTLE_WAIT_S = 40
#: The relay as `tollgate serve` runs it, with short pauses so a row that fails is tried again
#: (and moved aside) within the test's bounds.
RELAY = RelayPolicy(idle_s=0.05, backoff_s=0.1, max_backoff_s=0.5)


@pytest.fixture
async def stack(dev_server: WorkflowEnvironment, database_url: str, standins: StandIns,
                tmp_path: Path) -> AsyncIterator[tuple[Services, httpx.AsyncClient]]:
    queue = f"tq-{uuid.uuid4().hex[:8]}"
    address = dev_server.client.service_client.config.target_host
    settings = http_settings(database_url, tmp_path, address, queue)
    pool = await create_pool(database_url)
    svc = Services(settings=settings, pool=pool, tenant_secrets=TENANT_SECRETS,
                   limiter=TenantRateLimiter(rate=1000, burst=1000),
                   temporal=TemporalLink(address, settings.namespace, settings.env),
                   verifier=verifier_from_settings(settings))
    wsettings = worker_settings(database_url, standins, tmp_path, queue)
    async with main_worker(dev_server.client, wsettings), \
            draft_worker(dev_server.client, wsettings), \
            httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(svc)),
                              base_url="http://tollgate.test") as api:
        relay = asyncio.create_task(run_relay(svc.outbox, svc.temporal, queue, RELAY))
        try:
            yield svc, api
        finally:
            relay.cancel()
            await asyncio.gather(relay, return_exceptions=True)
    await pool.close()


def event_text(customer: str, key: str, **raw_fields: str) -> str:
    """A valid event's JSON text with each of ``raw_fields`` replaced by raw JSON text (some of
    it is JSON that ``json.dumps`` would never write)."""
    event = care_due("acme", customer, key, now=datetime.now(UTC))
    for name in raw_fields:
        event[name] = f"__{name}__"
    text = json.dumps(event)
    for name, raw in raw_fields.items():
        text = text.replace(f'"__{name}__"', raw)
    return text


def hostile_burst(customer: str) -> dict[str, tuple[str, bool]]:
    """name -> (body, signed with the tenant's key)."""
    def key() -> str:
        return fresh_key("hostile")

    return {
        "nul_in_key": (event_text(customer, key(), idempotency_key='"k-\\u0000-v"'), True),
        "surrogate_in_payload": (event_text(customer, key(), payload='{"note": "a\\ud800b"}'),
                                 True),
        "nested_1000_deep": (event_text(customer, key(), payload="[" * 1000 + "]" * 1000),
                             True),
        "over_long_payload_key": (event_text(
            customer, key(), payload=json.dumps({"k" * 17_000: 1})), True),
        "number_past_any_type": (event_text(customer, key(), payload='{"n": 1e999999}'), True),
        "over_long_idempotency_key": (event_text(customer, "k" * 600), True),
        "unknown_schema_version": (event_text(customer, key(), schema_version="99"), True),
        "bad_signature": (event_text(customer, key()), False),
    }


async def post(api: httpx.AsyncClient, body: str, *, signed: bool = True) -> httpx.Response:
    raw = body.encode("utf-8", "surrogatepass")
    headers = signed_headers(raw) if signed else signed_headers(raw, secret="not-the-key")
    return await api.post("/v1/events", content=raw, headers=headers)


async def rows(svc: Services, table: str, workflow_id: str) -> int:
    # The table name is one of this module's constants, never input.
    count: int = await svc.pool.fetchval(
        f"SELECT count(*) FROM {table} WHERE workflow_id = $1", workflow_id)
    return count


async def settled(svc: Services, workflow_id: str) -> tuple[int, int]:
    """(quarantine rows, outbox rows moved aside) of a hostile event's workflow id."""
    parked: int = await svc.pool.fetchval(
        "SELECT count(*) FROM outbox WHERE workflow_id = $1 AND parked_at IS NOT NULL",
        workflow_id)
    return await rows(svc, "quarantine", workflow_id), parked


async def test_a_valid_event_after_a_hostile_burst_reaches_its_workflow(
        stack: tuple[Services, httpx.AsyncClient], standins: StandIns,
        dev_server: WorkflowEnvironment) -> None:
    svc, api = stack
    customer = fresh_key("C")
    standins.crm.upsert("acme", customer, first_name="Lan", pet_name="Miu",
                        consent_messaging=True)

    answers = {name: await post(api, body, signed=signed)
               for name, (body, signed) in hostile_burst(customer).items()}
    valid_key = fresh_key("after-burst")
    valid = await post(api, event_text(customer, valid_key))
    assert valid.status_code == 202, valid.text
    workflow_id = valid.json()["workflow_id"]

    # The valid event gets its run, which reaches review, whatever the relay met before it.
    handle = dev_server.client.get_workflow_handle(workflow_id)
    ticket = await eventually(lambda: handle.query("review_ticket"),
                              f"{workflow_id} reaching AWAITING_REVIEW",
                              until=lambda t: t["state"] == EventState.AWAITING_REVIEW,
                              timeout=SETTLE_WAIT_S, interval=0.2, ignoring=(Exception,))
    assert ticket["state"] == EventState.AWAITING_REVIEW

    for name, answer in answers.items():
        assert 400 <= answer.status_code < 500, (name, answer.status_code, answer.text[:300])
        kept = answer.json().get("workflow_id")
        if kept:  # quarantined at once, or by its workflow once the relay sent it on, or moved
            # aside by the relay: with its reason, once
            ends = await eventually(partial(settled, svc, kept),
                                    f"{name} quarantined or moved aside",
                                    until=lambda qp: sum(qp) >= 1, timeout=SETTLE_WAIT_S,
                                    interval=0.2)
            assert ends in ((1, 0), (0, 1)), (name, ends)
    assert answers["bad_signature"].status_code == 401

    again = await post(api, event_text(customer, valid_key))
    assert again.status_code in (200, 202), again.text
    # Nothing doubled: one outbox row, one events row, one run for the valid event.
    assert await rows(svc, "outbox", workflow_id) == 1
    assert await svc.pool.fetchval(
        "SELECT count(*) FROM events WHERE tenant_id = 'acme' AND idempotency_key = $1",
        valid_key) == 1

    async def runs() -> list[WorkflowExecution]:
        query = f"WorkflowId = '{workflow_id}'"
        return [r async for r in dev_server.client.list_workflows(query)]

    found = await eventually(runs, f"{workflow_id} in visibility", until=bool,
                             timeout=SETTLE_WAIT_S, interval=0.2)
    assert len(found) == 1 and found[0].status == WorkflowExecutionStatus.RUNNING, found
