"""Checking an incident draft against PostgreSQL (issue 32 item 3, ADR 0046): draft one over a
window through `tollgate ops incident --json`, then hold every sentence to the validator and
every cited item's figures to queries of the tests' own. Shared by the fault run
(tests/faults/test_incident_summary.py) and the seeded chaos run (tests/e2e/test_chaos.py)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import asyncpg
import pytest

from contracts.incident import IncidentPacket, PacketItem, Postmortem
from policies.postmortem import item_figures, stated_figures, validate_postmortem
from tests.cli.helpers import run_ops
from tollgate.config.settings import Settings

WINDOW = "created_at >= $1 AND created_at < $2"
TERMINAL = ["SUCCEEDED", "STOPPED", "REJECTED", "DEAD_LETTERED", "EXPIRED"]


async def draft_over(settings: Settings, since: datetime, until: datetime,
                     capsys: pytest.CaptureFixture[str]
                     ) -> tuple[dict[str, Any], IncidentPacket, Postmortem]:
    """`tollgate ops incident --since --until --json` over every tenant: what it printed, its
    packet and its draft."""
    capsys.readouterr()  # the workers' log lines so far
    assert await run_ops(["incident", "--since", since.isoformat(), "--until",
                          until.isoformat(), "--json"], settings) == 0
    out = capsys.readouterr().out
    made = json.loads(out[out.index("{\n"):])  # after any late worker log line
    return (made, IncidentPacket.model_validate(made["packet"]),
            Postmortem.model_validate(made["draft"]))


async def assert_rests_on_database(db: asyncpg.Pool, packet: IncidentPacket,
                                   draft: Postmortem, since: datetime,
                                   until: datetime) -> set[str]:
    """The validator accepts the draft; every figure a sentence states is one its cited items
    hold; every cited item's figures are what PostgreSQL holds. Returns the cited refs."""
    assert validate_postmortem(draft, packet) == []
    items = {i.ref: i for i in packet.items}
    sentences = [*draft.impact, *draft.timeline, *draft.suspected_cause, *draft.open_items]
    for sentence in sentences:
        held = [items[r] for r in sentence.refs]
        stated, unknown_times = stated_figures(sentence.text, held)
        assert stated <= set().union(*map(item_figures, held)), sentence.text
        assert unknown_times == [], sentence.text
    cited = {r for s in sentences for r in s.refs}
    for ref in sorted(cited):
        assert items[ref].figures == await database_figures(db, items[ref], since, until), ref
    return cited


def items_of(packet: IncidentPacket, kind: str) -> list[PacketItem]:
    return [i for i in packet.items if i.kind == kind]


async def database_figures(db: asyncpg.Pool, item: PacketItem, since: datetime,
                           until: datetime) -> dict[str, Any]:
    """The figures of ``item``, read from PostgreSQL by the tests' own queries."""
    kind, _, ident = item.ref.partition(":")
    if kind == "sum":
        unknown = await db.fetch(
            # Recovered: the first terminal state after the unknown write is SUCCEEDED.
            "SELECT u.workflow_id, (SELECT t.to_state = 'SUCCEEDED' FROM state_transitions t"
            "  WHERE t.workflow_id = u.workflow_id AND t.at >= u.opened"
            "  AND t.to_state = ANY($3::text[]) ORDER BY t.at, t.seq LIMIT 1) AS ok"
            " FROM (SELECT workflow_id, min(at) AS opened FROM state_transitions"
            "  WHERE to_state = 'UNKNOWN_WRITE' GROUP BY 1) u"
            " WHERE u.opened >= $1 AND u.opened < $2", since, until, TERMINAL)
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
        # Recovery: from the first UNKNOWN_WRITE to the first terminal state after it.
        seconds = await db.fetchval(
            "SELECT extract(epoch FROM (SELECT min(t.at) FROM state_transitions t"
            "  WHERE t.workflow_id = e.workflow_id AND t.to_state = ANY($2::text[])"
            "  AND t.at >= (SELECT min(at) FROM state_transitions u"
            "   WHERE u.workflow_id = e.workflow_id AND u.to_state = 'UNKNOWN_WRITE'))"
            " - (SELECT min(at) FROM state_transitions t WHERE t.workflow_id = e.workflow_id"
            "  AND t.to_state = 'UNKNOWN_WRITE')) FROM events e WHERE e.id = $1", int(ident),
            TERMINAL)
        if seconds is None:
            return {"id": int(ident)}
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
            # An unknown write's code is its first receipt's.
            " + (SELECT count(*) FROM (SELECT workflow_id, min(at) AS opened"
            "    FROM state_transitions WHERE to_state = 'UNKNOWN_WRITE' GROUP BY 1) u"
            "    WHERE u.opened >= $1 AND u.opened < $2 AND coalesce((SELECT r.error_code"
            "     FROM receipts r WHERE r.workflow_id = u.workflow_id ORDER BY r.created_at"
            "     LIMIT 1), 'unknown_write') = $3)"
            f" + (SELECT count(*) FROM drafts WHERE {WINDOW} AND status IN"
            "    ('failed_validation', 'unreadable')"
            "    AND coalesce(split_part(findings->>0, ':', 1), status) = $3)",
            since, until, ident)
        return {"count": n}
    # A version group: its members' figures are checked above; it counts its members.
    return {"count": len(item.refs)}
