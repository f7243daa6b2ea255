"""Store-only steps, run as local activities: no outside call, one round trip each."""

from __future__ import annotations

from datetime import datetime

from temporalio import activity

from adapters.ports.stores.events import StepStore
from contracts import RefusedDecision, StepRecord


class StepActivities:
    def __init__(self, store: StepStore) -> None:
        self.store = store

    @activity.defn
    async def record_step(self, step: StepRecord) -> None:
        await self.store.record_step(step)

    async def recorded_at(self, step: StepRecord) -> datetime | None:
        """When this very step was recorded, by the store's clock; None when it was not."""
        return await self.store.recorded_at(step)

    @activity.defn
    async def record_refusal(self, refusal: RefusedDecision) -> None:
        await self.store.record_refused_decision(
            ref=refusal.ref, number=refusal.number, decision=refusal.decision,
            refusal_code=refusal.refusal_code, policy_version=refusal.policy_version,
        )
