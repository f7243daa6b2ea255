"""Runs that wait without a word: held sends and gate holds, steps that keep failing, reviewer
notices that did not go out. Read by ``ops status`` (``StatusStore``), ``/metrics``
(``MetricsStore``) and, for one event, ``tollgate trace`` (``TraceStore``); from PostgreSQL only,
so they answer while Temporal is down (ADR 0038)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from asyncpg.pool import PoolConnectionProxy

from adapters.postgres.notices import MAX_ATTEMPTS

#: The closed switch row that holds a send, the most specific first (``acme`` before ``*``); none
#: when the switch was reopened and the run has not looked again yet.
_COVERING_SWITCH = """LEFT JOIN LATERAL (
    SELECT k.adapter, k.tenant_id FROM kill_switches k
    WHERE k.closed AND k.adapter IN (h.adapter, '*') AND k.tenant_id IN (h.tenant_id, '*')
    ORDER BY k.adapter = '*', k.tenant_id = '*' LIMIT 1) k ON true"""

#: Held sends whose event is still APPROVED (a row of an event that moved on is over), then gate
#: holds (HELD_AT_GATE, since the latest entry into it), one row per wake-up key. $1: the time
#: before which a hold is silent; $2: one tenant's only (ADR 0076), or NULL: every tenant's.
HOLDS_SQL = f"""
SELECT 'kill_switch:' || coalesce(k.adapter || '/' || k.tenant_id,
                                  h.adapter || '/' || h.tenant_id) AS held_by,
       k.adapter IS NULL AS released, count(*) AS runs, min(h.since) AS since,
       count(*) FILTER (WHERE h.checked_at < $1) AS silent
FROM send_holds h JOIN events e ON e.workflow_id = h.workflow_id AND e.state = 'APPROVED'
{_COVERING_SWITCH}
WHERE $2::text IS NULL OR h.tenant_id = $2
GROUP BY 1, 2
UNION ALL
SELECT 'gate:' || e.tenant_id, false, count(*), min(coalesce(t.at, e.updated_at)), 0
FROM events e
LEFT JOIN LATERAL (SELECT max(at) AS at FROM state_transitions t
                   WHERE t.workflow_id = e.workflow_id AND t.to_state = 'HELD_AT_GATE') t ON true
WHERE e.state = 'HELD_AT_GATE' AND ($2::text IS NULL OR e.tenant_id = $2) GROUP BY e.tenant_id
ORDER BY 1, 2
"""

#: The hold of one event ($1), if it is held now: the same two reads for one workflow id.
HOLD_OF_EVENT_SQL = f"""
SELECT 'kill_switch:' || coalesce(k.adapter || '/' || k.tenant_id,
                                  h.adapter || '/' || h.tenant_id) AS held_by,
       k.adapter IS NULL AS released, h.since, h.checked_at
FROM send_holds h JOIN events e ON e.workflow_id = h.workflow_id AND e.state = 'APPROVED'
{_COVERING_SWITCH}
WHERE h.workflow_id = $1
UNION ALL
SELECT 'gate:' || e.tenant_id, false,
       coalesce((SELECT max(at) FROM state_transitions t WHERE t.workflow_id = e.workflow_id
                 AND t.to_state = 'HELD_AT_GATE'), e.updated_at), NULL
FROM events e WHERE e.workflow_id = $1 AND e.state = 'HELD_AT_GATE'
"""

#: A held send looks again at least once an hour (its fallback timer is capped at
#: ``workflows.budget.HOLD_FALLBACK_CAP``, 1 h); one that has not for longer than this is not
#: looking at all: its worker is gone, or its run ended without the event leaving APPROVED.
HOLD_SILENT_AFTER = timedelta(minutes=75)

#: Failing steps of runs still under way: an event's row in an open state, or a workflow that
#: is not an event's (a reconciler, a tagging job). $1: the open states; $2: as for holds (a
#: step of no tenant is none of one tenant's).
FAILING_SQL = """
SELECT f.workflow_id, f.step, f.tenant_id, f.attempts, f.error_class, f.error_code,
       f.first_seen_at, f.last_seen_at
FROM failing_steps f LEFT JOIN events e USING (workflow_id)
WHERE (e.state IS NULL OR e.state = ANY($1::text[])) AND ($2::text IS NULL OR f.tenant_id = $2)
ORDER BY f.first_seen_at, f.workflow_id, f.step
"""

#: FAILED rows under MAX_ATTEMPTS are still retried; at it they are given up; UNKNOWN ones
#: (the request left, no answer) are never resent. $1: MAX_ATTEMPTS; $2: as for holds.
NOTICES_SQL = """
SELECT count(*) FILTER (WHERE status = 'FAILED' AND attempts < $1) AS retrying,
       count(*) FILTER (WHERE status = 'FAILED' AND attempts >= $1) AS given_up,
       count(*) FILTER (WHERE status = 'UNKNOWN') AS unknown
FROM review_notices WHERE $2::text IS NULL OR tenant_id = $2
"""


async def read_signs(conn: PoolConnectionProxy, now: datetime, open_states: tuple[str, ...],
                     tenant: str | None = None) -> dict[str, Any]:
    """The three figures as ``ops status --json`` prints them (ages in seconds), of every
    tenant or of ``tenant`` only."""
    holds = [{"held_by": r["held_by"], "released": r["released"], "runs": r["runs"],
              "since": r["since"], "oldest_age_s": (now - r["since"]).total_seconds(),
              "silent": r["silent"]}
             for r in await conn.fetch(HOLDS_SQL, now - HOLD_SILENT_AFTER, tenant)]
    failing = [dict(r) for r in await conn.fetch(FAILING_SQL, list(open_states), tenant)]
    notices = await conn.fetchrow(NOTICES_SQL, MAX_ATTEMPTS, tenant)
    assert notices is not None  # an aggregate: always one row
    oldest = failing[0] if failing else None
    return {
        "holds": holds,
        "failing_steps": {
            "count": len(failing),
            "by_step": _by_step(failing),
            "oldest": None if oldest is None else {
                **{k: oldest[k] for k in ("workflow_id", "step", "attempts", "error_class",
                                          "error_code")},
                "age_s": (now - oldest["first_seen_at"]).total_seconds()},
        },
        "notices": {k: notices[k] for k in ("retrying", "given_up", "unknown")},
    }


async def hold_of(conn: PoolConnectionProxy, workflow_id: str) -> dict[str, Any] | None:
    """What holds this event now (``tollgate trace``), or None."""
    row = await conn.fetchrow(HOLD_OF_EVENT_SQL, workflow_id)
    return dict(row) if row else None


async def failing_of(conn: PoolConnectionProxy, workflow_id: str) -> list[dict[str, Any]]:
    """The steps of this workflow failing try after try (``tollgate trace``)."""
    return [dict(r) for r in await conn.fetch(
        "SELECT step, attempts, error_class, error_code, first_seen_at, last_seen_at"
        " FROM failing_steps WHERE workflow_id = $1 ORDER BY first_seen_at", workflow_id)]


def _by_step(failing: list[dict[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for row in failing:
        counts[row["step"]] = counts.get(row["step"], 0) + 1
    return counts
