"""Step 6: perform one approved action, at most once, with a receipt written first.

Order inside one attempt: kill switch, the action token (signature, expiry, scope over the
draft as PostgreSQL holds it, first use: ``activities.action_token``, ADR 0027), consent at the
source of truth, approval on record, receipt row (or the existing one), lookup before resending
anything that may have been sent, one call with the business key, then settle the receipt with
this attempt's fence. A run of the settle-closes shape (``ExecuteRequest.closing``, ADR 0057)
has its final step recorded with a final settle (``activities.attempt``); the result then names
its number (``closed_seq``) and the run writes nothing after it.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

import structlog
from temporalio import activity

from activities.action_token import TokenGuard
from activities.attempt import (
    ALREADY_HELD,
    Attempt,
    Closing,
    attempt_write,
    sent_nothing_yet,
    settle_final,
)
from activities.circuit import Circuit
from adapters.ports.stores.controls import RolloutGate, SwitchBoard
from adapters.ports.stores.receipts import OPENING_FENCE, SendReceipts
from adapters.ports.stores.sending import SendStore
from adapters.ports.targets import ActionAdapter, ContextSource
from contracts import (
    ActionRequest,
    EventState,
    ExecuteRequest,
    ExecuteResult,
    Receipt,
    ReceiptStatus,
    StepRecord,
    Transition,
)
from contracts.errors import RejectedError, TollgateError
from contracts.review import closing_step
from policies.keys import request_fingerprint

log = structlog.get_logger("tollgate.execute")


#: The EXECUTING step of a send that found consent withdrawn at the source: the run records
#: EXECUTING -> STOPPED next, so the numbers it gave this step are used (docs/rollout.md).
NO_CONSENT_REASON = "consent withdrawn at the source of truth, nothing sent"


def held_back(code: str) -> str:
    """The EXECUTING step's reason when the rollout mode holds the send back (WOULD_SEND)."""
    return f"receipt opened WOULD_SEND ({code}), nothing sent"


def failed_before_receipt(code: str) -> str:
    """The EXECUTING step's reason when the send step failed for good before it recorded the
    step (a refusal, the action token's too, or retries spent before the receipt), written with
    the dead letter (``DeadLetterActivities``). Every send opens its receipt with this step or
    records it before calling the target, so without it nothing was sent."""
    return f"send step failed before its receipt ({code}), nothing sent"


def executing_step(action: ActionRequest, seq: int, reason: str) -> StepRecord:
    """APPROVED -> EXECUTING under the number the run gave the send step (``seq``)."""
    return StepRecord(ref=action.ref, policy_version=action.policy_version,
                      transitions=[Transition(seq=seq, from_state=EventState.APPROVED,
                                              to_state=EventState.EXECUTING, actor="execute",
                                              reason=reason)])


def _executing(request: ExecuteRequest, reason: str) -> StepRecord:
    return executing_step(request.action, request.seq, reason)


def _closing(request: ExecuteRequest) -> Closing | None:
    """The run's final step for a final settle, when the run asked for it (ADR 0057)."""
    closing, action = request.closing, request.action
    if closing is None:
        return None
    return lambda status, reason_code: closing_step(
        action.ref, closing, status=status, reason_code=reason_code,
        policy_version=action.policy_version)


def _result(request: ExecuteRequest, attempt: Attempt) -> ExecuteResult:
    return ExecuteResult(
        status=attempt.status, receipt=attempt.receipt, reason_code=attempt.reason_code,
        closed_seq=request.closing.seq if attempt.closed and request.closing else None)


class ExecuteActivities:
    def __init__(
        self,
        store: SendStore,
        receipts: SendReceipts,
        ops: SwitchBoard,
        adapters: Mapping[str, ActionAdapter],
        source: ContextSource,
        rollout: RolloutGate,
        circuit: Circuit | None = None,
        lookup_windows: Mapping[str, timedelta] | None = None,
        *,
        tokens: TokenGuard,
    ) -> None:
        self.tokens = tokens
        self.circuit = circuit
        #: Per adapter, the lookup window its target declares (TOLLGATE_TARGETS); it travels
        #: with an unknown result to the reconciler, which cannot read configuration itself.
        self.lookup_windows = dict(lookup_windows or {})
        self.store = store
        self.receipts = receipts
        self.ops = ops
        self.adapters = adapters
        self.source = source
        self.rollout = rollout

    @activity.defn
    async def execute_action(self, request: ExecuteRequest) -> ExecuteResult:
        try:
            result = await self._execute(request)
            if result.status == "unknown":
                result = result.model_copy(
                    update={"lookup_window": self.lookup_windows.get(request.action.adapter)})
        except TollgateError as exc:
            log.info("execute_action", workflow_id=request.action.ref.workflow_id,
                     status="error", error_class=exc.error_class.value, code=exc.code,
                     attempt=activity.info().attempt)
            raise
        log.info("execute_action", workflow_id=request.action.ref.workflow_id,
                 status=result.status, reason_code=result.reason_code,
                 attempt=activity.info().attempt)
        return result

    async def _execute(self, request: ExecuteRequest) -> ExecuteResult:
        action = request.action
        ref = action.ref
        adapter = self.adapters.get(action.adapter)
        if adapter is None:  # a triage action on a worker without TOLLGATE_HELPDESK_URL
            raise RejectedError("target_not_configured", "this worker has no such target")
        # Switch, approval, receipt and rollout row in one round trip; the checks below still
        # run in the order of the module doc, and the two that change a row (a canary switch,
        # a canary slot) still take their own locked statement.
        reads = await self.store.read_before_send(
            tenant_id=ref.tenant_id, adapter=action.adapter, workflow_id=ref.workflow_id,
            draft_version=request.draft_version, action_key=action.action_key)
        if reads.switch_row and await self.ops.pass_switch(
                action.adapter, ref.tenant_id, row_seen=True) is not None:
            return ExecuteResult(status="held", reason_code="kill_switch_closed")
        # Before any call, the CRM's included; after the switch, so a held send is no use.
        await self.tokens.admit(request, reads.draft_body)
        record = await self.source.fetch_customer(ref.tenant_id, ref.entity_id)
        if record is None or not record.consent_messaging:
            if reads.receipt is None:  # else its opener recorded EXECUTING
                await self.store.record_step(_executing(request, NO_CONSENT_REASON))
            return ExecuteResult(status="stopped", reason_code="no_consent_at_send")
        # Approvals are only ever added, and before this activity is scheduled: the read above
        # is as good as one made now.
        if not reads.approved:
            raise RejectedError("no_approval_on_record", "no accepted approval for this draft")

        executing = _executing(request, "receipt opened, calling the target")
        recorded = False
        receipt = reads.receipt
        if receipt is None:
            receipt, recorded = await self._open_receipt(request, reads.rollout, executing)
        if receipt.status == ReceiptStatus.WOULD_SEND:
            code = receipt.error_code or "shadow_would_send"
            if not recorded:  # a retry, or another attempt opened it: the same step again
                await self.store.record_step(_executing(request, held_back(code)))
            return ExecuteResult(status="stopped", receipt=receipt, reason_code=code)
        if receipt.status == ReceiptStatus.SUCCEEDED:
            return ExecuteResult(status="succeeded", receipt=receipt, reason_code="already_sent")
        if receipt.status == ReceiptStatus.REJECTED:
            return ExecuteResult(status="rejected", receipt=receipt, reason_code=receipt.error_code)
        if not recorded:
            await self.store.record_step(executing)
        # A receipt this attempt opened counts this attempt only (its fence is OPENING_FENCE):
        # no earlier one to ask the target about.
        if not recorded and receipt.attempts > 0 and not sent_nothing_yet(receipt):
            # An earlier attempt may have reached the target: ask it before sending again.
            if not adapter.supports_lookup:
                return ExecuteResult(status="unknown", receipt=receipt,
                                     reason_code="earlier_attempt_unverifiable")
            held = await adapter.lookup(action.action_key)
            if held is not None:
                found = await settle_final(self.receipts, action.action_key, "succeeded",
                                           "found_at_target", None, _closing(request),
                                           external_id=held.external_id)
                return _result(request, found)
            if not adapter.dedupes_by_key:
                return ExecuteResult(status="unknown", receipt=receipt,
                                     reason_code="earlier_attempt_unverifiable")

        attempt = await attempt_write(self.receipts, adapter, action,
                                      from_pending=receipt.status == ReceiptStatus.PENDING,
                                      fence=OPENING_FENCE if recorded else None,
                                      closing=_closing(request))
        # The monitor signals (issue 11): an unknown write, or a target that already held a key
        # this first send never sent. Enough of them close the switch for the next actions.
        if self.circuit is not None and attempt.status == "unknown":
            await self.circuit.signal(action, "unknown_write")
        elif self.circuit is not None and attempt.reason_code == ALREADY_HELD:
            await self.circuit.signal(action, "duplicate")
        return _result(request, attempt)

    async def _open_receipt(self, request: ExecuteRequest, rollout: dict[str, Any] | None,
                            executing: StepRecord) -> tuple[Receipt, bool]:
        """The receipt, opened under the rollout mode in force (``rollout``: the covering row
        read with the others), with the EXECUTING step recorded in the same statement (then
        True): PENDING when the mode lets the action send, with ``executing`` and this attempt
        counted (the attempt holds ``OPENING_FENCE`` and takes no other), or a final WOULD_SEND
        (recording what would have gone out) when it does not, with the step saying so, so
        the STOPPED the run records next follows it with no gap (docs/rollout.md).

        Called only when no receipt was found: the mode is decided once per action key; a
        retried attempt finds its receipt and follows the mode stamped on it, so a canary slot
        is never taken twice (and ``decide_row`` takes none once any receipt holds the key)."""
        action = request.action
        fingerprint = request_fingerprint(action)
        decision = await self.rollout.decide_row(rollout, action.ref.event_id, action.action_key)
        would_send = None if decision.send else decision.reason_code or "shadow_would_send"
        step = executing if would_send is None else _executing(request, held_back(would_send))
        opened = await self.store.open_and_record(action, fingerprint, mode=decision.mode.value,
                                                  step=step, would_send=would_send)
        if opened is not None:
            return opened, True
        # A concurrent attempt opened it first: its receipt stands, nothing was recorded.
        held = await self.receipts.get(action.action_key)
        assert held is not None
        return held, False
