"""An incident summary after a seeded fault run (issue 32 items 2 and 3, ADR 0046): real events
through real failures on the worker, then `tollgate ops incident`, and every figure the draft
cites checked against PostgreSQL by queries of this test's own.

Fault run: two approved sends each stored by the target and answered 504 (unknown writes,
reconciled by lookup; the circuit's limit of 2 closes the messaging switch), one CARE_DUE v2
(schema drift: a dead letter), one event whose signature does not match its body (quarantined,
its customer name in the payload), a refund question for globex that the model routes to a
queue globex does not have (the validator refuses it: FAILED_VALIDATION), then an operator's
canary reopening.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg
import pytest
from temporalio.client import Client

import activities.circuit
from adapters.postgres.ops import OpsStore
from contracts import EventState
from contracts.policy import CircuitLimits
from policies.signing import sign_json
from tests.conftest import TENANT_SECRETS, TEST_KEYS_FILE, fresh_key, signed_event, start
from tests.faults.conftest import send_key
from tests.faults.incident_checks import assert_rests_on_database, draft_over, items_of
from tests.faults.kill_switch_support import approved, customer, new_key, sent
from tollgate.config.settings import Settings
from tollgate.dev.demo_triage import message_received
from tollgate.dev.standins import StandIns


async def fault_run(client: Client, queue: str, standins: StandIns, db: asyncpg.Pool) -> None:
    for _ in range(2):
        key = new_key()
        standins.messaging.inject("fail_after_write", key=send_key(key))
        outcome = await (await approved(client, queue, signed_event(customer(standins),
                                                                    key=key))).result()
        assert outcome.state == EventState.SUCCEEDED and sent(standins, send_key(key)) == (1, 1)
    drift = await (await start(client, queue, signed_event(customer(standins), version=2))
                   ).result()
    assert drift.state == EventState.DEAD_LETTERED
    forged = json.loads(signed_event(customer(standins)))
    forged["payload"]["first_name"] = "Lan Nguyen lan.nguyen@example.com"
    bad = await (await start(client, queue, json.dumps(forged))).result()
    assert bad.state == EventState.QUARANTINED
    refund = message_received("globex", "C-2001", fresh_key("msg"),
                              body="Please refund order O-77 to lan.nguyen@example.com",
                              now=datetime.now(UTC), order_id="O-77")
    refused = await (await start(client, queue, sign_json(json.dumps(refund), TENANT_SECRETS))
                     ).result()
    assert refused.state == EventState.FAILED_VALIDATION
    await OpsStore(db).set_switch(adapter="messaging", tenant_id="acme", closed=False,
                                  reason="reopened: target fixed", actor="op.kim", canary=1)


async def test_every_figure_the_incident_summary_cites_matches_the_database(
    worker_client: tuple[Client, str], standins: StandIns, db: asyncpg.Pool,
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, database_url: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    client, queue = worker_client
    monkeypatch.setattr(activities.circuit, "DEFAULT_LIMITS", CircuitLimits(unknown_writes=2))
    since = datetime.now(UTC) - timedelta(seconds=1)
    await fault_run(client, queue, standins, db)
    # The time-skipping server may run workflow time ahead of the wall clock: a wide end.
    until = datetime.now(UTC) + timedelta(days=1)

    settings = Settings.from_env({"DATABASE_URL": database_url,
                                  "TOLLGATE_STATE_DIR": str(tmp_path),
                                  "TOLLGATE_KEYS_FILE": str(TEST_KEYS_FILE)})
    made, packet, draft = await draft_over(settings, since, until, capsys)
    items = {i.ref: i for i in packet.items}

    # What the fault run did, as the packet counts it.
    totals = items["sum:window"].figures
    assert (totals["unknown_writes"], totals["unknown_writes_recovered"],
            totals["circuit_closures"], totals["kill_switch_changes"], totals["dead_letters"],
            totals["quarantined"], totals["failed_validations"]) == (2, 2, 1, 1, 1, 1, 1)
    assert items["code:schema_drift"].figures["count"] == 1
    assert items["code:route_not_allowed"].figures["count"] == 1
    # The two writes under the policy version the run used (a dated version is no phone number).
    [writes] = [i for i in items_of(packet, "version_group") if i.code == "unknown_write"]
    assert (writes.policy_version, writes.figures["count"]) == (
        await db.fetchval("SELECT DISTINCT policy_version FROM events WHERE id = ANY($1)",
                          [i.figures["id"] for i in items_of(packet, "unknown_write")]), 2)
    assert "q:reason:bad_signature" in items
    assert "Lan Nguyen" not in json.dumps(made) and "lan.nguyen" not in json.dumps(made)
    assert "O-77" not in json.dumps(made) and "refund" not in json.dumps(made)

    # Every sentence cites the packet, every figure it states is one its cited items hold, and
    # every cited item's figures are what PostgreSQL holds.
    cited = await assert_rests_on_database(db, packet, draft, since, until)
    assert {"sum:window", "cc:" + str(items_of(packet, "circuit_closure")[0].figures["id"]),
            "code:schema_drift"} <= cited
    impact = " ".join(s.text for s in draft.impact)
    assert "2 unknown writes (2 recovered by lookup)" in impact

