"""The circuit on monitor thresholds: each unknown write or duplicate signal an activity sees is
counted in PostgreSQL, and the (adapter, tenant) kill switch closes by itself at the limit the
policy locks (``PolicyRule.circuit``; ``DEFAULT_LIMITS`` when a rule has none). Reopening is
the operator's, as for any closed switch: ``tollgate ops reopen --canary N`` (docs/runbook.md).
"""

from __future__ import annotations

import structlog

from adapters.postgres_circuit import RULES, CircuitStore
from contracts import ActionRequest
from contracts.policy import CircuitLimits
from policies.matrix import PolicyMatrix

log = structlog.get_logger("tollgate.circuit")

#: What a policy rule without ``circuit`` gets (docs/policy.md).
DEFAULT_LIMITS = CircuitLimits()


class Circuit:
    def __init__(self, store: CircuitStore, matrix: PolicyMatrix | None = None) -> None:
        self.store = store
        self.matrix = matrix

    def limits(self, tenant_id: str, event_type: str) -> CircuitLimits:
        snapshot = self.matrix.rule_for(tenant_id, event_type) if self.matrix else None
        rule = snapshot.rule.circuit if snapshot else None
        return rule or DEFAULT_LIMITS

    async def signal(self, action: ActionRequest, kind: str) -> bool:
        """Count one signal of ``kind`` about ``action``; True when it closed the switch."""
        ref = action.ref
        limits = self.limits(ref.tenant_id, ref.event_type)
        limit = limits.unknown_writes if kind == "unknown_write" else limits.duplicates
        counted = await self.store.signal(
            adapter=action.adapter, tenant_id=ref.tenant_id, kind=kind, key=action.action_key,
            limit=limit, window=limits.window, policy_version=action.policy_version)
        if counted.tripped:
            log.warning("circuit_closed", adapter=action.adapter, tenant_id=ref.tenant_id,
                        rule=RULES[kind], count=counted.count, limit=limit)
        return counted.tripped
