"""Rollout modes and certifications in PostgreSQL (migration 0050, docs/rollout.md).

The send step asks ``decide`` once per action; operators change a mode with ``set_mode``, which
writes the audit row in the same transaction. Like kill switches, this needs PostgreSQL only.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import asyncpg

from contracts.rollout import RolloutDecision, RolloutMode, is_fixture_event

#: Rows covering (tenant, adapter), the most specific first.
COVERING_SQL = (
    "SELECT tenant_id, adapter, mode, canary_remaining, canary_percent FROM rollout_modes"
    " WHERE tenant_id IN ($1, '*') AND adapter IN ($2, '*')"
    " ORDER BY (tenant_id = '*'), (adapter = '*') LIMIT 1"
)


def canary_bucket(action_key: str) -> int:
    """0-99, stable per action key, so a retried action lands in the same share."""
    return int(hashlib.sha256(action_key.encode()).hexdigest()[:8], 16) % 100


class RolloutStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def decide(self, tenant_id: str, adapter: str, event_id: str,
                     action_key: str) -> RolloutDecision:
        """May this action send? A canary send takes one slot, under a row lock.

        Call it only for an action that has no receipt yet: a retried attempt follows the mode
        already stamped on its receipt, so it never takes a second canary slot.
        """
        row = await self.pool.fetchrow(COVERING_SQL, tenant_id, adapter)
        return await self.decide_row(dict(row) if row else None, event_id, action_key)

    async def decide_row(self, row: dict[str, Any] | None, event_id: str,
                         action_key: str) -> RolloutDecision:
        """``decide`` on the covering row already read (``adapters.postgres.execute``): only a
        canary send costs a statement more, the locked take of one slot."""
        if row is None:
            return RolloutDecision(mode=RolloutMode.ASSISTED, send=True)
        mode = RolloutMode(row["mode"])
        if mode == RolloutMode.ASSISTED:
            return RolloutDecision(mode=mode, send=True)
        if mode == RolloutMode.SHADOW:
            return RolloutDecision(mode=mode, send=False, reason_code="shadow_would_send")
        if mode == RolloutMode.FIXTURE:
            if is_fixture_event(event_id):
                return RolloutDecision(mode=mode, send=True)
            return RolloutDecision(mode=mode, send=False, reason_code="fixture_mode_not_fixture")
        percent = row["canary_percent"]
        if percent is not None and canary_bucket(action_key) >= percent:
            return RolloutDecision(mode=mode, send=False, reason_code="canary_shadow_share")
        # One statement, so its own transaction; the UPDATE locks the row. A receipt for the
        # key (a concurrent attempt of the same action opened it since the caller read) takes
        # no slot: that attempt's receipt wins the insert and its mode stands.
        taken = await self.pool.fetchval(
            "UPDATE rollout_modes SET canary_remaining = canary_remaining - 1"
            " WHERE tenant_id = $1 AND adapter = $2 AND mode = 'canary'"
            " AND canary_remaining > 0"
            " AND NOT EXISTS (SELECT 1 FROM receipts WHERE action_key = $3)"
            " RETURNING canary_remaining",
            row["tenant_id"], row["adapter"], action_key,
        )
        if taken is None:
            # The switch closed when the last slot went: the rest stay in shadow until an
            # owner confirms (moves the row to assisted, or grants a new canary).
            return RolloutDecision(mode=mode, send=False, reason_code="canary_closed_unconfirmed")
        return RolloutDecision(mode=mode, send=True)

    async def mode_of(self, tenant_id: str, adapter: str) -> dict[str, Any] | None:
        row = await self.pool.fetchrow(COVERING_SQL, tenant_id, adapter)
        return dict(row) if row else None

    async def set_mode(self, *, tenant_id: str, adapter: str, mode: RolloutMode, actor: str,
                       reason: str, canary: int | None = None,
                       percent: int | None = None, previous: str | None = None) -> None:
        """Put (tenant, adapter) in ``mode``; the audit row says from what, by whom and why."""
        async with self.pool.acquire() as conn, conn.transaction():
            await conn.execute(
                "INSERT INTO rollout_modes (tenant_id, adapter, mode, canary_remaining,"
                " canary_percent, reason, changed_by) VALUES ($1,$2,$3,$4,$5,$6,$7)"
                " ON CONFLICT (tenant_id, adapter) DO UPDATE SET mode = $3,"
                " canary_remaining = $4, canary_percent = $5, reason = $6, changed_by = $7,"
                " changed_at = now()",
                tenant_id, adapter, mode.value, canary, percent, reason, actor,
            )
            await conn.execute(
                "INSERT INTO audit (actor, action, target, detail) VALUES ($1,$2,$3,$4::jsonb)",
                actor, "rollout", f"{adapter}/{tenant_id}",
                json.dumps({"from": previous, "to": mode.value, "reason": reason,
                            "canary": canary, "percent": percent}),
            )

    async def modes(self, tenant: str | None = None) -> list[dict[str, Any]]:
        """Every mode row, or those covering ``tenant`` (its own and the '*' ones)."""
        rows = await self.pool.fetch(
            "SELECT * FROM rollout_modes WHERE $1::text IS NULL OR tenant_id IN ($1, '*')"
            " ORDER BY tenant_id, adapter", tenant)
        return [dict(r) for r in rows]

    # --- certifications -------------------------------------------------------------------

    async def record_certification(self, *, policy_version: str, code_commit: str,
                                   catalogue: str, passed: bool, tests_passed: int,
                                   tests_failed: int, pack_dir: str) -> int:
        return int(await self.pool.fetchval(
            "INSERT INTO certifications (policy_version, code_commit, catalogue, passed,"
            " tests_passed, tests_failed, pack_dir) VALUES ($1,$2,$3,$4,$5,$6,$7) RETURNING id",
            policy_version, code_commit, catalogue, passed, tests_passed, tests_failed, pack_dir,
        ))

    async def certified(self, policy_version: str, code_commit: str,
                        catalogue: str) -> dict[str, Any] | None:
        """The newest passing certification of exactly this policy, code and catalogue."""
        row = await self.pool.fetchrow(
            "SELECT id, at, pack_dir, tests_passed FROM certifications WHERE passed"
            " AND policy_version = $1 AND code_commit = $2 AND catalogue = $3"
            " ORDER BY id DESC LIMIT 1",
            policy_version, code_commit, catalogue,
        )
        return dict(row) if row else None
