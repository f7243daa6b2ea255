"""The figures ``/metrics`` serves, read from PostgreSQL at scrape time (docs/metrics.md).

Everything here is computed from rows (events, transitions, receipts, review decisions, drafts,
dead letters, quarantine, the outbox, audit, the intake duplicate counters), so it survives a worker
restart and every worker reports the same value. Each query is one grouped scan, aggregated in
PostgreSQL (histograms included): a scrape moves label sets, never one row per event. Labels are
tenant ids, adapter names, states and reason codes; nothing personal.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from adapters.postgres.outbox_admin import FIGURES_SQL
from adapters.postgres.replay_settle import FOUND_SETTLED_REASON
from adapters.postgres.run_signs import read_signs
from adapters.postgres.status import (
    OPEN_STATES,
    STALE_REPLAYS_SQL,
    UNKNOWN_WRITES_SQL,
    StatusStore,
)

#: Review opened -> decision, in seconds: people answer in minutes to days.
REVIEW_BUCKETS = (60.0, 300.0, 900.0, 1800.0, 3600.0, 4 * 3600.0, 8 * 3600.0, 86400.0,
                  3 * 86400.0)
#: Unknown write -> settled, in seconds: a lookup finds most at once, the reconciler's window
#: and the sweep the rest.
RECOVER_BUCKETS = (1.0, 5.0, 30.0, 60.0, 300.0, 900.0, 3600.0, 4 * 3600.0, 86400.0)

#: The states an unknown write ends in (the reconciler found it, the target refused it, it was
#: stopped, or it was dead-lettered as unverifiable).
SETTLED_STATES = ("SUCCEEDED", "REJECTED", "STOPPED", "DEAD_LETTERED")

# One row per accepted decision: seconds since the review it answered opened (the latest entry
# into AWAITING_REVIEW before it; request-info opens a new round).
_REVIEW_LATENCY = """
SELECT d.tenant_id, extract(epoch FROM d.at - o.opened) AS s
FROM review_decisions d
CROSS JOIN LATERAL (SELECT max(t.at) AS opened FROM state_transitions t
                    WHERE t.workflow_id = d.workflow_id AND t.to_state = 'AWAITING_REVIEW'
                      AND t.at <= d.at) o
WHERE d.accepted AND o.opened IS NOT NULL"""

# One row per event that ever had an unknown write: its adapter, when it opened and, once
# settled, how it ended and when.
_UNKNOWN = """
SELECT e.tenant_id, coalesce((SELECT r.adapter FROM receipts r
                              WHERE r.workflow_id = u.workflow_id LIMIT 1), '-') AS adapter,
       s.to_state AS outcome, extract(epoch FROM s.at - u.opened) AS s
FROM (SELECT workflow_id, min(at) AS opened FROM state_transitions
      WHERE to_state = 'UNKNOWN_WRITE' GROUP BY workflow_id) u
JOIN events e USING (workflow_id)
LEFT JOIN LATERAL (SELECT t.to_state, t.at FROM state_transitions t
                   WHERE t.workflow_id = u.workflow_id AND t.at >= u.opened
                     AND t.to_state = ANY($1::text[]) ORDER BY t.seq LIMIT 1) s ON true"""

# The finding code is the part before ':' (the rest names a field); an unreadable draft with no
# finding counts under its status.
_VALIDATION = """
SELECT e.tenant_id, coalesce(split_part(f.code, ':', 1), d.status) AS reason, count(*) AS n
FROM drafts d JOIN events e USING (workflow_id)
LEFT JOIN LATERAL jsonb_array_elements_text(d.findings) AS f(code) ON true
WHERE d.status IN ('failed_validation', 'unreadable') GROUP BY 1, 2"""

# started: an approval used (``dlq_replay``); then the replay's own result
# (``dlq_replay_result``), or ``already_done`` when the receipt showed the action had happened,
# ``already_rejected`` when it showed the target had refused it for good (a ``dlq_close`` the
# replay wrote, ``receipt already <STATUS>``; one closed by hand, ``by_hand``, is no replay).
_REPLAYS = f"""
SELECT coalesce(dl.tenant_id, '-') AS tenant_id,
       CASE WHEN a.action = 'dlq_replay' THEN 'started'
            WHEN a.action = 'dlq_replay_result' THEN a.detail->>'result'
            WHEN a.detail->>'reason' = '{FOUND_SETTLED_REASON}REJECTED' THEN 'already_rejected'
            ELSE 'already_done' END AS result, count(*) AS n
FROM audit a
LEFT JOIN dead_letters dl ON 'dead_letter/' || dl.id = a.target
WHERE a.action IN ('dlq_replay', 'dlq_replay_result')
   OR (a.action = 'dlq_close' AND a.detail->>'reason' LIKE '{FOUND_SETTLED_REASON}%'
       AND a.detail->>'by_hand' IS NULL)
GROUP BY 1, 2"""

_CLOSURES = """
SELECT split_part(target, '/', 1) AS adapter, split_part(target, '/', 2) AS tenant_id,
       detail->>'rule' AS rule, count(*) AS n
FROM audit WHERE actor = 'circuit' AND action = 'kill' GROUP BY 1, 2, 3"""


def _histogram_sql(source: str, labels: Sequence[str], bounds: Sequence[float]) -> str:
    """Cumulative bucket counts, count and sum per label set over ``source``'s ``s`` column.
    ``bounds`` are this module's constants, so writing them into the text is safe."""
    cols = ", ".join(labels)
    buckets = ", ".join(f"count(*) FILTER (WHERE s <= {float(b)!r})" for b in bounds)
    return (f"SELECT {cols}, ARRAY[{buckets}] AS buckets, count(*) AS n,"
            f" coalesce(sum(s), 0) AS total FROM ({source}) x WHERE s IS NOT NULL"
            f" GROUP BY {cols}")


def _histograms(rows: Sequence[Any], labels: Sequence[str],
                bounds: Sequence[float]) -> list[dict[str, Any]]:
    return [{**{label: r[label] for label in labels},
             "buckets": list(zip(bounds, r["buckets"], strict=True)), "count": r["n"],
             "sum": float(r["total"])} for r in rows]


class MetricsStore(StatusStore):
    """The figures that must survive a worker restart, labelled by tenant and adapter (never by
    anything personal), for the Prometheus collector."""

    async def gauges(self, now: datetime) -> dict[str, list[dict[str, Any]]]:
        async with self.pool.acquire() as conn, conn.transaction(readonly=True):
            async def rows(sql: str, *args: Any) -> list[dict[str, Any]]:
                return [dict(r) for r in await conn.fetch(sql, *args)]

            figures = {
                "events": await rows(
                    "SELECT tenant_id, state, count(*) AS n FROM events"
                    " GROUP BY tenant_id, state"),
                "oldest": await rows(
                    "SELECT state, extract(epoch FROM $1 - min(updated_at)) AS age FROM events"
                    " WHERE state = ANY($2::text[]) GROUP BY state", now, list(OPEN_STATES)),
                "receipts": await rows(
                    "SELECT tenant_id, adapter, status, count(*) AS n FROM receipts"
                    " GROUP BY tenant_id, adapter, status"),
                # Open, moved aside, closed by hand: ``ops status``'s figures, by its SQL.
                "unknown_writes": await rows(UNKNOWN_WRITES_SQL),
                # Replayed dead letters in no queue: ``ops status``'s, by its SQL.
                "stale_replays": await rows(
                    "SELECT tenant_id, adapter, count(*) AS n FROM (" + STALE_REPLAYS_SQL
                    + ") s GROUP BY tenant_id, adapter", now),
                "dead_letters": await rows(
                    "SELECT coalesce(tenant_id, '-') AS tenant_id, error_code, status,"
                    " count(*) AS n FROM dead_letters GROUP BY 1, 2, 3"),
                # Live rows, the oldest one's age and rows moved aside, per (signing) tenant.
                "outbox": await rows(FIGURES_SQL, now),
                "quarantine": await rows(
                    "SELECT reason_code, count(*) AS n FROM quarantine GROUP BY reason_code"),
                "reviews": await rows(
                    "SELECT tenant_id, count(*) AS waiting,"
                    " count(*) FILTER (WHERE review_due_at < $1) AS past_sla FROM events"
                    " WHERE state = 'AWAITING_REVIEW' GROUP BY tenant_id", now),
                "switches": await rows("SELECT adapter, tenant_id, closed FROM kill_switches"),
                "duplicates": await rows(
                    "SELECT tenant_id, channel, stage, n FROM intake_duplicates"),
                # A conflicting delivery is quarantined (once per distinct body) under its
                # tenant, which was admitted before: the label is a known tenant id.
                "conflicts": await rows(
                    "SELECT tenant_id, count(*) AS n FROM quarantine"
                    " WHERE reason_code = 'idempotency_conflict' AND tenant_id IS NOT NULL"
                    " GROUP BY tenant_id"),
                "validation": await rows(_VALIDATION),
                "replays": await rows(_REPLAYS),
                "closures": await rows(_CLOSURES),
                "unknown": await rows(
                    "SELECT tenant_id, adapter, coalesce(outcome, 'open') AS outcome,"
                    " count(*) AS n FROM (" + _UNKNOWN + ") x GROUP BY 1, 2, 3",
                    list(SETTLED_STATES)),
                "review_latency": _histograms(await conn.fetch(_histogram_sql(
                    _REVIEW_LATENCY, ["tenant_id"], REVIEW_BUCKETS)), ["tenant_id"],
                    REVIEW_BUCKETS),
                "recover": _histograms(await conn.fetch(_histogram_sql(
                    _UNKNOWN, ["tenant_id", "adapter"], RECOVER_BUCKETS),
                    list(SETTLED_STATES)), ["tenant_id", "adapter"], RECOVER_BUCKETS),
            }
            signs = await read_signs(conn, now, OPEN_STATES)
        figures["past_sla"] = [{"tenant_id": r["tenant_id"], "n": r["past_sla"]}
                               for r in figures["reviews"]]
        # Held runs, failing steps, undelivered notices: what `ops status` shows (ADR 0038).
        figures["held"] = [{"held_by": h["held_by"], "n": h["runs"]} for h in signs["holds"]]
        figures["failing_steps"] = [{"step": step, "n": n} for step, n
                                    in signs["failing_steps"]["by_step"].items()]
        figures["notices"] = [{"status": status, "n": n}
                              for status, n in signs["notices"].items()]
        return figures
