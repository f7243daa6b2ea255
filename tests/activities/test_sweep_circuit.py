"""A sweep finding drift (receipts marked sent that the target does not hold) is a duplicate
signal: past the limit the tenant's switch for that adapter closes by itself."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator

import pytest

import activities.circuit
from activities.circuit import Circuit
from activities.sweep import SweepActivities
from adapters.ports.targets import TargetWrite
from adapters.postgres.circuit import CircuitStore
from adapters.postgres.pool import create_pool
from adapters.postgres.receipts import ReceiptStore
from contracts import ActionRequest, EventRef, ReceiptStatus
from contracts.policy import CircuitLimits
from contracts.sweep import SweepRequest
from policies.keys import action_key
from tests.conftest import fresh_key


class ForgetfulTarget:
    """A target that can be looked up and holds nothing: every SUCCEEDED receipt is drift."""

    supports_lookup = True
    dedupes_by_key = True

    async def lookup(self, key: str) -> TargetWrite | None:
        return None


@pytest.fixture
async def receipts(database_url: str) -> AsyncIterator[ReceiptStore]:
    pool = await create_pool(database_url, max_size=2)
    yield ReceiptStore(pool)
    await pool.close()


async def sent_receipt(receipts: ReceiptStore, tenant: str) -> None:
    event_id = fresh_key("evt")
    ref = EventRef(workflow_id=f"event/{tenant}/{event_id}", tenant_id=tenant,
                   event_id=event_id, event_type="CARE_DUE", entity_id="C-1",
                   correlation_id="c", schema_version=3)
    a = ActionRequest(ref=ref, adapter="messaging", action="send_message",
                      action_key=action_key(tenant, event_id, "messaging", "send_message"),
                      channel="sms", body="hi", policy_version="v", approved_by="r")
    await receipts.open_receipt(a, "fp")
    await receipts.settle(a.action_key, ReceiptStatus.SUCCEEDED, fence=None, external_id="m")


async def test_drift_past_the_limit_closes_the_switch_once(
    receipts: ReceiptStore, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(activities.circuit, "DEFAULT_LIMITS", CircuitLimits(duplicates=2))
    sweep = SweepActivities(receipts, {"messaging": ForgetfulTarget()},  # type: ignore[dict-item]
                            Circuit(CircuitStore(receipts.pool)))
    tenant = f"t{uuid.uuid4().hex[:6]}"
    await sent_receipt(receipts, tenant)

    async def closed() -> bool:
        return bool(await receipts.pool.fetchval(
            "SELECT closed FROM kill_switches WHERE adapter = 'messaging' AND tenant_id = $1",
            tenant))

    await sweep.sweep_receipts(SweepRequest(recheck_recent=1000))
    # The same lost receipt found again by the next sweep is not a second signal.
    await sweep.sweep_receipts(SweepRequest(recheck_recent=1000))
    assert not await closed()
    await sent_receipt(receipts, tenant)
    report = await sweep.sweep_receipts(SweepRequest(recheck_recent=1000))
    assert len(report.drift_missing_at_target) >= 2
    assert await closed()
    reason = await receipts.pool.fetchval(
        "SELECT reason FROM kill_switches WHERE adapter = 'messaging' AND tenant_id = $1", tenant)
    assert reason == "duplicates: 2 in 15 min (limit 2)"


def test_a_rule_locks_its_own_limits_and_others_get_the_defaults() -> None:
    from datetime import timedelta

    from policies.matrix import VERSIONS_DIR, PolicyMatrix, newest_matrix_file

    data = json.loads(newest_matrix_file(VERSIONS_DIR).read_text())
    tenant, event_type = next((t, e) for t, rules in data["rules"].items() for e in rules)
    data["rules"][tenant][event_type]["circuit"] = {"unknown_writes": 2, "window": "PT5M"}
    circuit = Circuit(CircuitStore(None), PolicyMatrix.model_validate(data))  # type: ignore[arg-type]
    adapter = data["rules"][tenant][event_type]["adapter"]
    locked = circuit.limits(tenant, event_type, adapter)
    assert (locked.unknown_writes, locked.duplicates, locked.window) == (
        2, 5, timedelta(minutes=5))
    # The sweep knows no event type: the tenant's rule for that adapter still applies.
    assert circuit.limits(tenant, None, adapter) == locked
    assert Circuit(CircuitStore(None)).limits(tenant, event_type, adapter) == (  # type: ignore[arg-type]
        activities.circuit.DEFAULT_LIMITS)
