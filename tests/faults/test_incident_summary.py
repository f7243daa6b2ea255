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
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from temporalio.client import Client

import activities.circuit
from adapters.postgres.ops import OpsStore
from contracts import EventState
from contracts.incident import IncidentPacket, PacketItem, Postmortem
from contracts.policy import CircuitLimits
from policies.postmortem import item_figures, stated_figures, validate_postmortem
from policies.signing import sign_json
from tests.cli.helpers import run_ops
from tests.conftest import TENANT_SECRETS, TEST_KEYS_FILE, signed_event, start
from tests.faults.conftest import send_key
from tests.faults.test_kill_switch import approved, customer, new_key, sent
from tollgate.config.settings import Settings
from tollgate.dev.demo_triage import message_received
from tollgate.dev.standins import StandIns

WINDOW = "created_at >= $1 AND created_at < $2"


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
    refund = message_received("globex", "C-2001", f"msg-{uuid.uuid4().hex[:10]}",
                              body="Please refund order O-77 to lan.nguyen@example.com",
                              now=datetime.now(UTC), order_id="O-77")
    refused = await (await start(client, queue, sign_json(json.dumps(refund), TENANT_SECRETS))
                     ).result()
    assert refused.state == EventState.FAILED_VALIDATION
    await OpsStore(db).set_switch(adapter="messaging", tenant_id="acme", closed=False,
                                  reason="reopened: target fixed", actor="op.kim", canary=1)


async def database_figures(db: asyncpg.Pool, item: PacketItem, since: datetime,
                           until: datetime) -> dict[str, Any]:
    """The figures of ``item``, read from PostgreSQL by this test's own queries."""
    kind, _, ident = item.ref.partition(":")
    if kind == "sum":
        unknown = await db.fetch(
            "SELECT workflow_id, bool_or(to_state = 'SUCCEEDED') AS ok FROM state_transitions"
            " WHERE workflow_id IN (SELECT workflow_id FROM state_transitions"
            " WHERE to_state = 'UNKNOWN_WRITE' AND at >= $1 AND at < $2) GROUP BY 1",
            since, until)
        audit = await db.fetch("SELECT actor, action FROM audit WHERE at >= $1 AND at < $2",
                               since, until)
        dead = await db.fetchval(f"SELECT count(*) FROM dead_letters WHERE {WINDOW}",
                                 since, until)
        quarantined = await db.fetchval(f"SELECT count(*) FROM quarantine WHERE {WINDOW}",
                                        since, until)
        refused = await db.fetchval(f"SELECT count(*) FROM drafts WHERE {WINDOW} AND status IN"
                                    " ('failed_validation', 'unreadable')", since, until)
        switch_actions = ("kill", "reopen", "reopen_canary")
        return {"dead_letters": dead, "unknown_writes": len(unknown),
                "unknown_writes_recovered": sum(1 for r in unknown if r["ok"]),
                "circuit_closures": sum(1 for a in audit
                                        if (a["actor"], a["action"]) == ("circuit", "kill")),
                "kill_switch_changes": sum(1 for a in audit if a["actor"] != "circuit"
                                           and a["action"] in switch_actions),
                "quarantined": quarantined, "failed_validations": refused,
                "replays": sum(1 for a in audit if a["action"].startswith("dlq_replay")),
                "failures": dead + len(unknown) + quarantined + refused}
    if kind == "dl":
        row = await db.fetchrow("SELECT id, replays FROM dead_letters WHERE id = $1", int(ident))
        return {"id": row["id"], "replays": row["replays"]}
    if kind == "uw":
        seconds = await db.fetchval(
            "SELECT extract(epoch FROM (SELECT min(at) FROM state_transitions t"
            "  WHERE t.workflow_id = e.workflow_id AND t.to_state = 'SUCCEEDED')"
            " - (SELECT min(at) FROM state_transitions t WHERE t.workflow_id = e.workflow_id"
            "  AND t.to_state = 'UNKNOWN_WRITE')) FROM events e WHERE e.id = $1", int(ident))
        return {"id": int(ident), "recovery_seconds": round(float(seconds), 1)}
    if kind in ("cc", "ks"):
        row = await db.fetchrow("SELECT id, detail FROM audit WHERE id = $1", int(ident))
        detail = json.loads(row["detail"])
        return {"id": row["id"], **{k: int(detail[k]) for k in
                                    ("count", "limit", "window_seconds", "canary")
                                    if detail.get(k) is not None}}
    if kind == "fv":
        row_id, _, version = ident.partition("v")
        found = await db.fetchval("SELECT d.version FROM drafts d JOIN events e USING"
                                  " (workflow_id) WHERE e.id = $1 AND d.version = $2"
                                  " AND d.status = 'failed_validation'", int(row_id),
                                  int(version))
        return {"draft_version": found}
    if kind == "q":
        reason = ident.removeprefix("reason:")
        n = await db.fetchval(f"SELECT count(*) FROM quarantine WHERE {WINDOW}"
                              " AND reason_code = $3", since, until, reason)
        return {"count": n}
    if kind == "code":
        n = await db.fetchval(
            f"SELECT (SELECT count(*) FROM dead_letters WHERE {WINDOW} AND error_code = $3)"
            f" + (SELECT count(*) FROM quarantine WHERE {WINDOW} AND reason_code = $3)"
            " + (SELECT count(DISTINCT t.workflow_id) FROM state_transitions t"
            "    JOIN receipts r USING (workflow_id) WHERE t.to_state = 'UNKNOWN_WRITE'"
            "    AND t.at >= $1 AND t.at < $2 AND coalesce(r.error_code, 'unknown_write') = $3)"
            f" + (SELECT count(*) FROM drafts WHERE {WINDOW} AND status IN"
            "    ('failed_validation', 'unreadable')"
            "    AND coalesce(split_part(findings->>0, ':', 1), status) = $3)",
            since, until, ident)
        return {"count": n}
    # A version group: its members' figures are checked above; it counts its members.
    return {"count": len(item.refs)}


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
    capsys.readouterr()  # the workers' log lines so far
    assert await run_ops(["incident", "--since", since.isoformat(), "--until",
                          until.isoformat(), "--json"], settings) == 0
    out = capsys.readouterr().out
    made = json.loads(out[out.index("{\n"):])  # after any late worker log line
    packet = IncidentPacket.model_validate(made["packet"])
    draft = Postmortem.model_validate(made["draft"])
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

    # Every sentence cites the packet, and every figure it states is one its cited items hold.
    assert validate_postmortem(draft, packet) == []
    cited = {r for s in (*draft.impact, *draft.timeline, *draft.suspected_cause,
                         *draft.open_items) for r in s.refs}
    assert {"sum:window", "cc:" + str(items_of(packet, "circuit_closure")[0].figures["id"]),
            "code:schema_drift"} <= cited
    for section in ("impact", "timeline", "suspected_cause", "open_items"):
        for sentence in getattr(draft, section):
            held = [items[r] for r in sentence.refs]
            stated, unknown_times = stated_figures(sentence.text, held)
            assert stated <= set().union(*map(item_figures, held)), sentence.text
            assert unknown_times == [], sentence.text
    # ...and every cited item's figures are what PostgreSQL holds.
    for ref in sorted(cited):
        assert items[ref].figures == await database_figures(db, items[ref], since, until), ref
    impact = " ".join(s.text for s in draft.impact)
    assert "2 unknown writes (2 recovered by lookup)" in impact


def items_of(packet: IncidentPacket, kind: str) -> list[PacketItem]:
    return [i for i in packet.items if i.kind == kind]
