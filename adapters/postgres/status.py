"""What an operator's status screen reads: counts and ages from PostgreSQL only, so it works
while the Temporal server is down. No customer data: states, tenants, reason codes, ages."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import asyncpg

from adapters.postgres.outbox_admin import FIGURES_SQL, outbox_totals
from adapters.postgres.receipts import AWAITING_A_PERSON_SQL, MOVED_ASIDE_SQL
from adapters.postgres.run_signs import read_signs

#: States an event leaves on its own; a record that stays in one for long needs a look.
OPEN_STATES = ("RECEIVED", "VALIDATED", "CONTEXT_READY", "DRAFTED", "AWAITING_REVIEW",
               "HELD_AT_GATE", "APPROVED", "EXECUTING", "UNKNOWN_WRITE", "RECONCILING")

#: Unknown writes per tenant and adapter, the one rule ``ops status`` sums and ``/metrics``
#: serves (``tollgate_open_unknown_writes`` and beside it): ``open``, an UNKNOWN receipt not
#: moved aside; ``aside``, an open receipt moved aside whose dead letter awaits a person
#: (counted there, under dead letters); ``closed``, one whose dead letter a person closed, off
#: the books (``MOVED_ASIDE_SQL``, ADRs 0059 and 0060). The receipt of each stays open.
UNKNOWN_WRITES_SQL = (
    "SELECT tenant_id, adapter,"
    " count(*) FILTER (WHERE status = 'UNKNOWN' AND NOT aside) AS open,"
    " count(*) FILTER (WHERE aside AND waiting) AS aside,"
    " count(*) FILTER (WHERE aside AND NOT waiting) AS closed"
    " FROM (SELECT r.tenant_id, r.adapter, r.status,"
    f" {MOVED_ASIDE_SQL} AS aside, {AWAITING_A_PERSON_SQL} AS waiting"
    " FROM receipts r WHERE r.status IN ('PENDING', 'UNKNOWN')) o GROUP BY tenant_id, adapter")


#: How long past its lookup window a replay may still be running: its one resend's retries
#: and a worker's restart fit well within it.
REPLAY_MARGIN = "1 hour"
#: A lookup window as a request's JSON holds it (ISO 8601 as pydantic writes a timedelta:
#: ``PT10M``, ``P1DT2H3.25S``, ``P1Y35D``), each field short enough that now minus it stays a
#: timestamp. Only such text is cast: one cast that fails fails the whole statement, and a
#: row edited by hand must not take ``ops status`` down with it.
WINDOW_PATTERN = r"^P(?!$)(\d{1,3}Y)?(\d{1,6}D)?(T(\d{1,6}H)?(\d{1,6}M)?(\d{1,6}(\.\d{1,6})?S)?)?$"
#: Dead letters REPLAYED whose write is still open and whose last replay is over: in no
#: queue, since a replay that stops reopens its dead letter (ADR 0059) and one that settles the
#: write settles the receipt. Over when its run recorded its end (``ended``: ``failed`` or
#: ``cancelled`` here, ADR 0069), or, with no end recorded, once claimed longer ago than it
#: can run (its lookup window, 10 minutes unless the request says, plus ``REPLAY_MARGIN``):
#: its run was terminated, never started (its command died after the claim), or is from
#: before ADR 0069 and its command did not hear the end (ADR 0066). PostgreSQL alone cannot
#: tell such a replay from one that still runs, so ``ops status`` names them for a person.
#: A window that does not read (``window_unreadable``) names its replay at once: how long it
#: may run is unknown. ``updated_at`` is the claim's time (``claim_replay`` sets it, as the
#: ``dlq_replay`` audit row's ``at``; nothing else changes a REPLAYED row); PostgreSQL holds
#: no time the run began, so a replay whose worker was down longer than the margin is named
#: while it still runs (docs/runbook.md says to ask Temporal first).
#: ``/metrics`` counts the same rows by tenant and adapter (``tollgate_stale_replays``; the
#: adapter is the open receipt's, one per dead letter: ``action_key`` is its key). $1: now.
STALE_REPLAYS_SQL = (
    "SELECT d.id, d.replays, d.updated_at, e.ended, coalesce(d.tenant_id, '-') AS tenant_id,"
    " r.adapter, w.span IS NULL AS window_unreadable FROM dead_letters d"
    " JOIN receipts r ON r.action_key = d.action_key AND r.status IN ('PENDING', 'UNKNOWN')"
    " LEFT JOIN LATERAL (SELECT a.detail ->> 'result' AS ended FROM audit a"
    " WHERE a.action = 'dlq_replay_result' AND a.target = 'dead_letter/' || d.id"
    " AND a.detail ->> 'replay' = d.replays::text LIMIT 1) e ON true"
    " CROSS JOIN LATERAL (SELECT CASE WHEN v IS NULL THEN interval '10 minutes'"
    " WHEN v ~ '" + WINDOW_PATTERN + "' THEN v::interval END AS span"
    " FROM (SELECT d.replay_input ->> 'lookup_window' AS v) j) w"
    " WHERE d.status = 'REPLAYED' AND (e.ended IS NOT NULL OR w.span IS NULL"
    f" OR d.updated_at < $1::timestamptz - w.span - interval '{REPLAY_MARGIN}') ORDER BY d.id")


class StatusStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def snapshot(self, now: datetime, tenant: str | None = None) -> dict[str, Any]:
        """One read of everything ``tollgate ops status`` shows (a few cheap aggregate queries
        in one transaction, so the figures agree with each other). ``tenant``: that tenant's
        figures only (ADR 0076), the switches covering it (its own and the '*' ones) among
        them; the last sweep's time alone, one sweep checking every tenant's receipts."""
        mine, mine_2 = (f"(${n}::text IS NULL OR tenant_id = ${n})" for n in (1, 2))
        async with self.pool.acquire() as conn, conn.transaction(readonly=True):
            states = await conn.fetch(
                "SELECT state, count(*) AS n, min(updated_at) AS oldest FROM events"
                f" WHERE {mine} GROUP BY state ORDER BY state", tenant)
            reviews = await conn.fetch(
                "SELECT tenant_id, count(*) AS waiting,"
                " count(*) FILTER (WHERE review_due_at < $1) AS past_sla FROM events"
                f" WHERE state = 'AWAITING_REVIEW' AND {mine_2} GROUP BY tenant_id"
                " ORDER BY tenant_id", now, tenant)
            # Quarantined events never reach ``events``: their records are in ``quarantine``.
            quarantined = await conn.fetchval(f"SELECT count(*) FROM quarantine WHERE {mine}",
                                              tenant)
            unknown = await conn.fetch(f"SELECT * FROM ({UNKNOWN_WRITES_SQL}) u WHERE {mine}",
                                       tenant)
            dead = await conn.fetch(
                "SELECT error_code, count(*) AS n FROM dead_letters"
                f" WHERE status IN ('OPEN', 'APPROVED') AND {mine}"
                " GROUP BY error_code ORDER BY error_code", tenant)
            stale = await conn.fetch(
                f"SELECT * FROM ({STALE_REPLAYS_SQL}) r WHERE {mine_2} ORDER BY id", now, tenant)
            closed = await conn.fetch(
                "SELECT adapter, tenant_id, reason, changed_by, changed_at FROM kill_switches"
                " WHERE closed AND ($1::text IS NULL OR tenant_id IN ($1, '*'))"
                " ORDER BY adapter, tenant_id", tenant)
            outbox = [dict(r) for r in await conn.fetch(
                f"SELECT * FROM ({FIGURES_SQL}) f WHERE {mine_2}", now, tenant)]
            last = await conn.fetchrow(
                "SELECT at, detail FROM audit WHERE action = 'receipt_sweep'"
                " ORDER BY at DESC LIMIT 1")
            sweep = None if last is None else dict(last)
            if sweep is not None and tenant is not None:  # its figures are every tenant's
                sweep["detail"] = None
            # Held runs, failing steps, undelivered reviewer notices (ADR 0038).
            signs = await read_signs(conn, now, OPEN_STATES, tenant)
        return {
            "as_of": now,
            "states": [{"state": r["state"], "count": r["n"],
                        "oldest_age_s": (now - r["oldest"]).total_seconds()
                        if r["state"] in OPEN_STATES else None} for r in states]
            + ([{"state": "QUARANTINED", "count": quarantined, "oldest_age_s": None}]
               if quarantined else []),
            "reviews": [dict(r) for r in reviews],
            "open_unknown_writes": sum(r["open"] for r in unknown),
            "unknown_writes_moved_aside": sum(r["aside"] for r in unknown),
            "unknown_writes_closed_by_hand": sum(r["closed"] for r in unknown),
            "dead_letters": [{"reason": r["error_code"], "count": r["n"]} for r in dead],
            "stale_replays": [{"dead_letter": r["id"], "replay": r["replays"],
                               "claimed_age_s": (now - r["updated_at"]).total_seconds(),
                               "ended": r["ended"],
                               "window_unreadable": r["window_unreadable"]}
                              for r in stale],
            "closed_switches": [dict(r) for r in closed],
            "last_sweep": sweep,
            "outbox": outbox_totals(outbox),
            **signs,
        }

