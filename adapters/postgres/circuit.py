"""The circuit: count a monitor signal and close the kill switch when its threshold is passed.

One statement records the signal, counts the (adapter, tenant)'s signals of that kind in the
window (only those since the switch was last reopened, so a canary reopening starts from zero),
and, when the count reaches the limit, closes the switch and writes the audit row naming the
rule and the figures. One statement, so two workers seeing signals together cannot both miss
the threshold, and a closed switch always has its audit row.
"""

from __future__ import annotations

from datetime import timedelta

import asyncpg

from adapters.ports.stores.controls import RULES, CircuitCount

_SIGNAL = """
WITH sig AS (
    INSERT INTO circuit_signals (adapter, tenant_id, kind, signal_key)
    VALUES ($1::text, $2::text, $3::text, $4::text)
    ON CONFLICT (kind, signal_key) DO NOTHING RETURNING at
), since AS (
    SELECT GREATEST(now() - $6::interval, COALESCE((
        SELECT changed_at FROM kill_switches
        WHERE adapter = $1 AND tenant_id = $2 AND NOT closed), '-infinity')) AS t
), n AS (
    SELECT (SELECT count(*) FROM circuit_signals c, since
            WHERE c.adapter = $1 AND c.tenant_id = $2 AND c.kind = $3 AND c.at >= since.t)
         + (SELECT count(*) FROM sig) AS c
), trip AS (
    INSERT INTO kill_switches (adapter, tenant_id, closed, reason, changed_by)
    SELECT $1, $2, true,
           $7::text || ': ' || n.c || ' in ' || $8::text || ' (limit ' || $5::int || ')',
           'circuit'
    FROM n WHERE n.c >= $5::int AND EXISTS (SELECT 1 FROM sig)
    ON CONFLICT (adapter, tenant_id) DO UPDATE SET closed = true, reason = EXCLUDED.reason,
        changed_by = 'circuit', canary_remaining = NULL, changed_at = now()
        WHERE NOT kill_switches.closed
    RETURNING adapter
), logged AS (
    INSERT INTO audit (actor, action, target, detail)
    SELECT 'circuit', 'kill', $1 || '/' || $2, jsonb_build_object(
        'rule', $7::text, 'count', n.c, 'limit', $5::int, 'window_seconds', $9::int,
        'policy_version', $10::text, 'last_signal', $4::text)
    FROM trip, n RETURNING id
)
SELECT (SELECT c FROM n) AS count, (SELECT count(*) FROM logged) AS tripped
"""


class CircuitStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def signal(self, *, adapter: str, tenant_id: str, kind: str, key: str, limit: int,
                     window: timedelta, policy_version: str | None) -> CircuitCount:
        """Record one signal of ``kind`` (``RULES``) about ``key``; a repeat of the same key and
        kind counts once."""
        rule = RULES[kind]
        minutes = int(window.total_seconds() // 60)
        row = await self.pool.fetchrow(
            _SIGNAL, adapter, tenant_id, kind, key, limit, window, rule,
            f"{minutes} min" if minutes else f"{int(window.total_seconds())} s",
            int(window.total_seconds()), policy_version)
        assert row is not None  # a SELECT of scalars always returns its row
        return CircuitCount(int(row["count"]), bool(row["tripped"]))
