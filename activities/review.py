"""Step 5's outside reads and writes: the policy gate's counts, opening a review with its SLA,
and the escalation notice to the fallback owner.

``count_gate_inputs`` and ``open_review`` are store-only and run as local activities (one
round trip each; a one-marker-shape run does both in one, ``gate_and_open_review``).
``notify_fallback_owner`` is a regular activity: it is the port a real channel (mail, pager)
will sit behind, and every attempt of a notification should be visible in the history. For now
the channel is the ``audit`` table plus one structlog line.
"""

from __future__ import annotations

from datetime import datetime

import structlog
from temporalio import activity

from adapters.ports.stores.events import ReviewStore
from contracts import EscalationNotice, GateCounts, GateCountsRequest, ReviewOpening
from contracts.fused_steps import GatedOpening
from policies.gate import evaluate_gate

log = structlog.get_logger("tollgate.review")


class ReviewActivities:
    def __init__(self, store: ReviewStore) -> None:
        self.store = store

    @activity.defn
    async def count_gate_inputs(self, request: GateCountsRequest) -> GateCounts:
        return await self.counts(request)

    async def counts(self, request: GateCountsRequest, *,
                     sent_before: datetime | None = None) -> GateCounts:
        """The gate's counts; ``sent_before`` (a store time): only the sends before it count."""
        ref = request.ref
        sends, overdue = await self.store.count_gate_inputs(
            tenant_id=ref.tenant_id, entity_id=ref.entity_id, adapter=request.adapter,
            action=request.action, as_of=request.as_of, workflow_id=ref.workflow_id,
            sent_before=sent_before,
        )
        return GateCounts(sends_today=sends, overdue_reviews=overdue)

    @activity.defn
    async def open_review(self, opening: ReviewOpening) -> None:
        await self.store.open_review(opening.step, opening.review_due_at)

    @activity.defn
    async def gate_and_open_review(self, request: GatedOpening) -> GateCounts:
        """``count_gate_inputs`` then, only when the pure gate on those counts says review,
        ``open_review``: one local activity for both (a one-marker-shape run, ADR 0053). The
        workflow applies the same gate to the counts returned, so it knows what was written."""
        counts = await self.count_gate_inputs(request.counts)
        gate = evaluate_gate(request.policy, request.draft, sends_today=counts.sends_today,
                             overdue_reviews=counts.overdue_reviews)
        if gate.route == "review":
            await self.open_review(request.opening)
        return counts

    @activity.defn
    async def notify_fallback_owner(self, notice: EscalationNotice) -> None:
        """Tell the fallback owner that a review passed its SLA. References only: the owner
        reads the record itself (``tollgate review show``); nothing personal leaves here."""
        ref = notice.ref
        written = await self.store.record_escalation(
            dedupe_key=f"escalation/{ref.workflow_id}/{notice.request_id}",
            target=ref.workflow_id,
            detail={
                "fallback_owner": notice.fallback_owner, "tenant_id": ref.tenant_id,
                "event_type": ref.event_type, "request_id": notice.request_id,
                "draft_version": notice.draft_version,
                "review_due_at": notice.review_due_at.isoformat(),
                "review_deadline": notice.review_deadline.isoformat(),
                "policy_version": notice.policy_version,
            },
        )
        log.warning("review_escalated", workflow_id=ref.workflow_id, tenant_id=ref.tenant_id,
                    fallback_owner=notice.fallback_owner, request_id=notice.request_id,
                    draft_version=notice.draft_version, first_notice=written)
