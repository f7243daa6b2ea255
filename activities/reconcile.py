"""Resolving unknown writes: ask the target what it holds for a key, settle the receipt; the one
keyed resend only after the approval's binding is checked again (``activities.resend_guard``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import structlog
from temporalio import activity

from activities.attempt import attempt_write
from activities.resend_guard import ResendGuard
from adapters.ports.stores.controls import DeadLetterQueue
from adapters.ports.stores.receipts import ReceiptLedger
from adapters.ports.targets import ActionAdapter
from contracts import ReceiptStatus, ReconcileRequest, ReconcileResult
from contracts.actions import (
    UNRECONCILED_CODE,
    UNRECONCILED_OWNER,
    UNRECONCILED_PLAN,
    ReplayEnd,
    ReplaySettle,
    replay_number,
)
from contracts.errors import ErrorClass, RejectedError
from policies.redaction import redact

log = structlog.get_logger("tollgate.reconcile")

#: A resend that still cannot be confirmed stops here: it goes to an operator, never round again.
_RESEND_STATUS: dict[str, Literal["resent", "stopped", "rejected"]] = {
    "succeeded": "resent", "unknown": "stopped", "rejected": "rejected",
}


#: What an operator does with a resend the approval no longer covers (ADR 0049).
REFUSED_PLAN = (
    "The one keyed resend was refused: the approval no longer covers it (the code says why: "
    "the draft changed, the approval or the consent is gone, the token does not match). "
    "Nothing was resent and the lookups found nothing at the target for this key. Not replayed "
    "from here: read the event (`tollgate trace`); if the customer still needs a message, the "
    "producer submits the event again under a new event id, which goes through review again.")


def _replay(request: ReconcileRequest, how: str) -> ReplaySettle | None:
    """The replay this run is, when it is a dead letter's (``tollgate ops dlq replay``): its
    settle ends the event the dead letter stopped (ADR 0061). The number is its run id's
    (``reconcile/KEY/replay-N``: ``tollgate.ops.replay_in_flight.replay_workflow_id``)."""
    if request.replay_of is None:
        return None
    return ReplaySettle(dead_letter=request.replay_of,
                        number=replay_number(activity.info().workflow_id or ""), how=how)


class ReconcileActivities:
    def __init__(
        self, receipts: ReceiptLedger, ops: DeadLetterQueue,
        adapters: Mapping[str, ActionAdapter], *, guard: ResendGuard,
    ) -> None:
        self.guard = guard
        self.receipts = receipts
        self.ops = ops
        self.adapters = adapters

    @activity.defn
    async def lookup_write(self, request: ReconcileRequest) -> ReconcileResult | None:
        """Settle the receipt if the target holds the write; None while it does not (yet)."""
        action = request.action
        adapter = self.adapters[action.adapter]
        current = await self.receipts.get(action.action_key)
        if current is not None and current.status == ReceiptStatus.SUCCEEDED:
            replay = _replay(request, "receipt found SUCCEEDED")
            if replay is not None:  # settled since the dead letter: its event follows now
                current = await self.receipts.settle(action.action_key, ReceiptStatus.SUCCEEDED,
                                                     fence=None, replay=replay)
            return ReconcileResult(status="succeeded", receipt=current)
        if not adapter.supports_lookup:
            return ReconcileResult(status="unverifiable", reason_code="target_cannot_look_up")
        held = await adapter.lookup(action.action_key)
        log.info("lookup_write", workflow_id=action.ref.workflow_id, found=held is not None)
        if held is None:
            return None
        receipt = await self.receipts.settle(action.action_key, ReceiptStatus.SUCCEEDED,
                                             fence=None, external_id=held.external_id,
                                             replay=_replay(request, "found at the target"))
        return ReconcileResult(status="succeeded", receipt=receipt, reason_code="found_at_target")

    @activity.defn
    async def resend_write(self, request: ReconcileRequest) -> ReconcileResult:
        """The one resend a key-deduplicating target allows after the lookup window."""
        action = request.action
        adapter = self.adapters[action.adapter]
        if not adapter.dedupes_by_key:
            raise RejectedError("resend_not_safe", "target neither dedupes nor can be looked up")
        refused = await self.guard.refusal(request)
        if refused is not None:
            log.info("resend_write", workflow_id=action.ref.workflow_id, refused=refused)
            return ReconcileResult(status="refused", reason_code=refused)
        attempt = await attempt_write(self.receipts, adapter, action,
                                      replay=_replay(request, "resent"))
        return ReconcileResult(status=_RESEND_STATUS[attempt.status],
                               receipt=attempt.receipt, reason_code=attempt.reason_code)

    @activity.defn
    async def dead_letter_write(self, request: ReconcileRequest) -> None:
        action = request.action
        ref = action.ref
        facts = redact({"action_key": action.action_key, "adapter": action.adapter,
                        "tenant_id": ref.tenant_id, "event_id": ref.event_id})
        if request.refused is not None:  # the resend was refused: fixed upstream, no replay
            # A replay's refusal ends the replayed dead letter too, in the same transaction:
            # this one holds the write now (ADR 0066).
            await self.ops.dead_letter(
                replaces=_replay(request, "had its resend refused"),
                workflow_id=ref.workflow_id, error_class=ErrorClass.REJECTED.value,
                error_code=request.refused, state="STOPPED", owner="messaging-oncall",
                replay_plan=REFUSED_PLAN, redacted_payload=facts, tenant_id=ref.tenant_id,
                event_id=ref.event_id, correlation_id=ref.correlation_id,
                action_key=action.action_key)
            return
        await self.ops.dead_letter(
            workflow_id=ref.workflow_id, error_class=ErrorClass.UNKNOWN_WRITE.value,
            error_code=UNRECONCILED_CODE, state="STOPPED", owner=UNRECONCILED_OWNER,
            replay_plan=UNRECONCILED_PLAN,
            redacted_payload=facts,
            tenant_id=ref.tenant_id, event_id=ref.event_id, correlation_id=ref.correlation_id,
            # The token is a bearer credential: never stored (an approved replay needs none).
            action_key=action.action_key,
            replay_input=request.model_dump(mode="json", exclude={"action_token"}),
        )

    @activity.defn
    async def record_replay_end(self, end: ReplayEnd) -> None:
        """The replay run's own end, as it ends (ADR 0069): PostgreSQL tells a finished replay
        from a running one whether or not the command that started it is still waiting."""
        if end.number is None:  # not started as a replay (no replay-N id): nothing to key it by
            log.warning("record_replay_end", dead_letter=end.dead_letter, recorded=False)
            return
        recorded = await self.ops.record_replay_result(end.dead_letter, actor=None,
                                                       replay=end.number, result=end.result)
        log.info("record_replay_end", dead_letter=end.dead_letter, replay=end.number,
                 result=end.result, recorded=recorded)
