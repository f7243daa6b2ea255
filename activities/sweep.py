"""The receipt sweep's one activity: compare receipts with what the targets hold, by key."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

import structlog
from temporalio import activity

from activities.circuit import Circuit
from adapters.ports.stores.receipts import ReceiptSweep
from adapters.ports.targets import ActionAdapter
from contracts.sweep import SweepReport, SweepRequest

log = structlog.get_logger("tollgate.sweep")


class SweepActivities:
    def __init__(self, receipts: ReceiptSweep, adapters: Mapping[str, ActionAdapter],
                 circuit: Circuit | None = None) -> None:
        self.circuit = circuit
        self.receipts = receipts
        self.adapters = adapters

    @activity.defn
    async def sweep_receipts(self, request: SweepRequest) -> SweepReport:
        found, still_open, missing, followed = [], [], [], []
        stale = await self.receipts.stale_open(datetime.now(UTC) - request.older_than,
                                               request.limit)
        recent = await self.receipts.recent_succeeded(request.recheck_recent)
        for row in stale:
            held = await self._lookup(row["adapter"], row["action_key"])
            if held is None:
                still_open.append(row["action_key"])
                continue
            # The event a dead letter of this write ended follows it (ADRs 0063, 0065).
            _, end = await self.receipts.settle_swept(row["action_key"], external_id=held)
            found.append(row["action_key"])
            if end is not None:
                followed.append(end)
        for row in recent:
            if await self._lookup(row["adapter"], row["action_key"]) is None:
                missing.append(row["action_key"])
                if self.circuit is not None:  # drift is a duplicate signal for the circuit
                    await self.circuit.count(adapter=row["adapter"], tenant_id=row["tenant_id"],
                                             kind="duplicate", key=f"drift:{row['action_key']}")
        report = SweepReport(checked=len(stale) + len(recent), settled_found_at_target=found,
                             still_open=still_open, drift_missing_at_target=missing,
                             followed=followed)
        log.info("sweep_receipts", checked=report.checked, settled=len(found),
                 still_open=len(still_open), drift_missing=len(missing),
                 followed=len(followed))
        # Kept for `tollgate ops status` (when did the sweep last run, what did it find).
        await self.receipts.record_sweep(report.checked, len(found), len(still_open),
                                         len(missing))
        return report

    async def _lookup(self, adapter_name: str, key: str) -> str | None:
        adapter = self.adapters.get(adapter_name)
        if adapter is None or not adapter.supports_lookup:
            return None
        held = await adapter.lookup(key)
        return held.external_id if held else None
