"""The circuit on monitor thresholds: each unknown write or duplicate signal an activity sees is
counted in PostgreSQL, and the (adapter, tenant) kill switch closes by itself at the limit the
policy locks (``PolicyRule.circuit``; ``DEFAULT_LIMITS`` when a rule has none). Reopening is
the operator's, as for any closed switch: ``tollgate ops reopen --canary N`` (docs/runbook.md).
"""

from __future__ import annotations

import structlog

from adapters.ports.stores.controls import RULES, CircuitCounter
from contracts import ActionRequest
from contracts.policy import CircuitLimits
from policies.matrix import WILDCARD, PolicyMatrix

log = structlog.get_logger("tollgate.circuit")

#: What a policy rule without ``circuit`` gets (docs/policy.md).
DEFAULT_LIMITS = CircuitLimits()


class Circuit:
    def __init__(self, store: CircuitCounter, matrix: PolicyMatrix | None = None) -> None:
        self.store = store
        self.matrix = matrix

    def limits(self, tenant_id: str, event_type: str | None, adapter: str) -> CircuitLimits:
        """The rule's limits for the event type, or (the sweep knows no event type) the first
        of the tenant's rules for this adapter that sets them; else ``DEFAULT_LIMITS``."""
        if self.matrix is not None and event_type is not None:
            snapshot = self.matrix.rule_for(tenant_id, event_type)
            if snapshot is not None:
                return snapshot.rule.circuit or DEFAULT_LIMITS
        if self.matrix is not None:
            for key in (tenant_id, WILDCARD):
                for rule in self.matrix.rules.get(key, {}).values():
                    if rule.adapter == adapter and rule.circuit is not None:
                        return rule.circuit
        return DEFAULT_LIMITS

    async def signal(self, action: ActionRequest, kind: str) -> bool:
        """Count one signal of ``kind`` about ``action``; True when it closed the switch."""
        ref = action.ref
        return await self.count(adapter=action.adapter, tenant_id=ref.tenant_id, kind=kind,
                                key=action.action_key, event_type=ref.event_type,
                                policy_version=action.policy_version)

    async def count(self, *, adapter: str, tenant_id: str, kind: str, key: str,
                    event_type: str | None = None, policy_version: str | None = None) -> bool:
        limits = self.limits(tenant_id, event_type, adapter)
        limit = limits.unknown_writes if kind == "unknown_write" else limits.duplicates
        counted = await self.store.signal(
            adapter=adapter, tenant_id=tenant_id, kind=kind, key=key, limit=limit,
            window=limits.window, policy_version=policy_version)
        if counted.tripped:
            log.warning("circuit_closed", adapter=adapter, tenant_id=tenant_id,
                        rule=RULES[kind], count=counted.count, limit=limit)
        return counted.tripped
