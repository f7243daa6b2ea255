"""The action token's mint in a ProcessEventWorkflow run (ADR 0027): right after the approval
is recorded, before the send is scheduled, so the send request carries a token scoped to what
was approved. Called from one place, ``SendingLedger._execute``. Deterministic.

Runs recorded before the ``action-token`` patch send without a token, as they did (the send
step then refuses them: ``action_token_missing``, dead-lettered).
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from activities.action_token import ActionTokenActivities
    from contracts import ExecuteRequest, ReviewDecision, StepFailure
    from contracts.actions import MintedToken, MintRequest
    from workflows import timeouts as t
    from workflows.failures import dead_letter_failure
    from workflows.shape import taken

#: workflow.patched() id: the mint before the send. Never reuse or remove while histories
#: recorded before it may run (tests/replay keeps both paths).
MINT_BEFORE_SEND = "action-token"


async def with_action_token(execute: ExecuteRequest,
                            decision: ReviewDecision) -> ExecuteRequest | StepFailure:
    """``execute`` with the token minted for ``decision``; a mint refused for good (no
    approval on record) comes back as the ``StepFailure`` already dead-lettered."""
    if not taken(MINT_BEFORE_SEND):
        return execute
    action = execute.action
    try:
        # Local: one store read and a signature, on the worker that holds the key.
        minted: MintedToken = await workflow.execute_local_activity_method(
            ActionTokenActivities.mint_action_token,
            MintRequest(action=action, draft_version=execute.draft_version,
                        request_id=decision.request_id, as_of=workflow.now()),
            start_to_close_timeout=t.STORE_TIMEOUT, retry_policy=t.STORE_RETRY,
            summary="mint the action token for what was approved")
    except (ActivityError, ApplicationError) as err:  # a local activity's may come unwrapped
        failure = await dead_letter_failure(action.ref, "execute_action", err, action=action,
                                            seq=execute.seq)
        if failure is None:
            raise
        return failure
    return execute.model_copy(update={"action_token": minted.token})
