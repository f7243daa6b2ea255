"""The send half of a ProcessEventWorkflow run: the approved action to its target, held while
a kill switch covers it, reconciled when the write is unknown, continued as new past the history
budget (workflows/budget.py). A base class like ``EventLedger``: no handlers here, so
``ProcessEventWorkflow`` stays the only place Temporal looks for them. Deterministic.
"""

from __future__ import annotations

from typing import Literal, NoReturn

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import (
        ActionRequest,
        DraftResult,
        EventRef,
        EventState,
        ExecuteRequest,
        FinalOutcome,
        IntakeRequest,
        IntakeResult,
        ReconcileRequest,
        ReconcileResult,
        ReviewDecision,
        SendClosing,
        StepFailure,
        target_task_queue,
    )
    from contracts.carry import RunCarry
    from contracts.contacts import TenantContact
    from contracts.policy import PolicySnapshot
    from contracts.review import FINAL_STATE
    from contracts.triage import TICKET_CHANNEL
    from policies.keys import action_key
    from workflows import timeouts as t
    from workflows.action_token import with_action_token
    from workflows.holds import Hold
    from workflows.ledger import EventLedger
    from workflows.reconcile_write import ReconcileWriteWorkflow
    from workflows.review import ReviewDesk
    from workflows.send import BUDGET_SPENT, send
    from workflows.shape import quiet, settle_closes, taken

#: workflow.patched() id: the send runs on its target's queue, whose workers carry its rate
#: limit (never reuse or remove while older histories may run; tests/replay keeps both paths).
TARGET_TASK_QUEUE = "target-task-queue"


#: The memo key of the carry a continued run resumes from (workflows/resume.py).
CARRY_MEMO = "tollgate_carry"


class SendingLedger(EventLedger):
    # Set by ProcessEventWorkflow; declared here for what continue-as-new carries.
    _intake: IntakeResult | None
    _intake_calls: int
    _review: ReviewDesk
    _draft: DraftResult | None
    _generation: int
    _contacts: tuple[TenantContact, ...]

    def __init__(self) -> None:
        super().__init__()
        self._hold = Hold()

    def _carry(self, at: Literal["gate", "send"], draft: DraftResult, *,
               fields: dict[str, str] | None = None, decision: ReviewDecision | None = None,
               send: ExecuteRequest | None = None, queue: str | None = None) -> RunCarry:
        raise NotImplementedError  # ProcessEventWorkflow: workflows.resume.carry_of

    def _continue(self, request: IntakeRequest, carry: RunCarry) -> NoReturn:
        """Past the history budget: the same event goes on in a fresh run (raises)."""
        workflow.logger.info("history budget spent at %s: continuing as new", carry.at)
        workflow.continue_as_new(request, memo={CARRY_MEMO: carry})

    def _action(self, ref: EventRef, policy: PolicySnapshot, draft: DraftResult,
                decision: ReviewDecision) -> ActionRequest:
        """The approved action, keyed by business data."""
        assert draft.draft is not None
        rule = policy.rule
        return ActionRequest(
            ref=ref, adapter=rule.adapter, action=rule.action,
            action_key=action_key(ref.tenant_id, ref.event_id, rule.adapter, rule.action),
            # A triage assignment goes out on the ticket (contracts/triage.py).
            channel=TICKET_CHANNEL if draft.triage else "sms", body=draft.draft.message,
            policy_version=policy.version,
            approved_by=decision.reviewer,
        )

    async def _execute(
        self, request: IntakeRequest, ref: EventRef, policy: PolicySnapshot, draft: DraftResult,
        decision: ReviewDecision,
    ) -> FinalOutcome:
        action = self._action(ref, policy, draft, decision)
        self._set_state(EventState.EXECUTING)
        exec_seq = self._next_seq()
        # Older runs send from the main queue (its workers still serve execute_action there).
        queue = (target_task_queue(workflow.info().task_queue, action.adapter)
                 if taken(TARGET_TASK_QUEUE) else None)
        execute = await with_action_token(
            ExecuteRequest(action=action, draft_version=draft.version, seq=exec_seq), decision)
        if isinstance(execute, StepFailure):
            return await self._finish(EventState.DEAD_LETTERED, execute.code)
        return await self._send(request, draft, decision, execute, queue)

    async def _resume_send(self, request: IntakeRequest, carry: RunCarry) -> FinalOutcome:
        """The send a continued run carried over, with its token minted again: the hold that
        spent the budget may have outlasted the carried token's life (ADR 0027)."""
        assert carry.send is not None and carry.decision is not None
        if quiet() and self._shown != EventState.EXECUTING:
            # The run before continued within the quiet delay (ADR 0056): show it now.
            self._set_state(EventState.EXECUTING)
        execute = await with_action_token(carry.send, carry.decision)
        if isinstance(execute, StepFailure):
            return await self._finish(EventState.DEAD_LETTERED, execute.code)
        return await self._send(request, carry.draft, carry.decision, execute, carry.queue)

    async def _send(self, request: IntakeRequest, draft: DraftResult, decision: ReviewDecision,
                    execute: ExecuteRequest, queue: str | None) -> FinalOutcome:
        action, ref = execute.action, execute.action.ref
        if settle_closes():  # the send records the end with its settle (ADR 0057)
            closing = SendClosing(seq=self._seq + 1, payload_fingerprint=self._fingerprint)
            execute = execute.model_copy(update={"closing": closing})
        result = await send(execute, queue, self._hold,
                            lambda held: with_action_token(held, decision))
        if result == BUDGET_SPENT:
            self._continue(request, self._carry("send", draft, decision=decision,
                                                send=execute, queue=queue))
        if isinstance(result, StepFailure):
            return await self._finish(EventState.DEAD_LETTERED, result.code)
        if result.status != "unknown" and result.closed_seq is not None:
            return self._closed(FINAL_STATE[result.status], result.reason_code, result.receipt,
                                result.closed_seq)
        if result.status != "unknown":
            return await self._finish(FINAL_STATE[result.status], result.reason_code,
                                      receipt=result.receipt)
        await self._record([EventState.UNKNOWN_WRITE, EventState.RECONCILING],
                           "the target may hold the write; reconciling by key")
        settled: ReconcileResult = await workflow.execute_child_workflow(
            ReconcileWriteWorkflow.run, ReconcileRequest(
                ref=ref, action=action, lookup_window=result.lookup_window or t.RECONCILE_WINDOW,
                # The send being reconciled: its resend checks the same binding (ADR 0049).
                draft_version=execute.draft_version, send_seq=execute.seq,
                action_token=execute.action_token),
            id=f"reconcile/{action.action_key}",
        )
        return await self._finish(FINAL_STATE[settled.status],
                                  settled.reason_code or "reconciled", receipt=settled.receipt)
