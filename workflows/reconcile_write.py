"""ReconcileWriteWorkflow: settle a write whose outcome is unknown, without a blind resend.

Look the key up at the target with backoff until the window closes, the last look at its end
(ADR 0079). Found: SUCCEEDED with the target's id. Not found: resend once with the same key only
if the target dedupes by key (the resend activity refuses otherwise) and the approval still
covers it (the activity checks the action token's binding again: ADR 0049); else STOPPED with a
dead letter for an operator. A target that cannot be looked up at all skips the window: waiting
would tell nothing. A dead letter's replay (``replay_of``) records its own end as it ends,
whoever waits for it (ADR 0069); cancelled during its resend, the run ends cancelled without
writing its dead letter again (ADR 0077).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from types import MappingProxyType

from temporalio import workflow
from temporalio.exceptions import ActivityError, is_cancelled_exception

with workflow.unsafe.imports_passed_through():
    from activities.reconcile import ReconcileActivities
    from contracts import ReconcileRequest, ReconcileResult, target_task_queue
    from contracts.actions import ReplayEnd, ReplayOutcome, replay_number
    from workflows import timeouts as t

#: Patch id: a target without lookup no longer waits out the lookup window (issue 9).
NO_LOOKUP_SKIPS_WINDOW = "no-lookup-skips-window"
#: Patch id: lookups and the resend run on the target's own (rate-limited) task queue.
TARGET_TASK_QUEUE = "target-task-queue"
#: Patch id: a dead letter's replay run writes its own end (ADR 0069).
REPLAY_RECORDS_ITS_END = "replay-records-its-end"
#: Patch id: a replay cancelled during its resend ends cancelled, its dead letter not written
#: again (ADR 0077).
RESEND_CANCEL_ENDS_RUN = "resend-cancel-ends-run"
#: Patch id: one more look at the lookup window's end when the backoff's last fell short of it,
#: so a write the target shows late in the window it declared is found (ADR 0079).
LAST_LOOK_AT_WINDOW_END = "last-look-at-window-end"

#: A replay's end by its result's status; every other status it can return is ``stopped``.
_SETTLED: Mapping[str, ReplayOutcome] = MappingProxyType(
    {"succeeded": "succeeded", "resent": "resent", "rejected": "rejected"})


@workflow.defn(name="ReconcileWrite")
class ReconcileWriteWorkflow:
    @workflow.run
    async def run(self, request: ReconcileRequest) -> ReconcileResult:
        if request.replay_of is None:
            return await self._reconcile(request)
        try:
            result = await self._reconcile(request)
        except (ActivityError, asyncio.CancelledError) as exc:
            # The run ends without a result: a step gave up for good, or it was cancelled.
            await self._record_end(request, "cancelled" if is_cancelled_exception(exc)
                                   else "failed")
            raise
        await self._record_end(request, _SETTLED.get(result.status, "stopped"))
        return result

    async def _record_end(self, request: ReconcileRequest, result: ReplayOutcome) -> None:
        """The replay's end in PostgreSQL (one row per replay), written by the run itself so
        it is there however the command that started it fared. Replays started before the
        patch end with no such step, as they did."""
        if request.replay_of is None or not workflow.patched(REPLAY_RECORDS_ITS_END):
            return
        end = ReplayEnd(dead_letter=request.replay_of, result=result,
                        number=replay_number(workflow.info().workflow_id))
        await workflow.execute_activity_method(
            ReconcileActivities.record_replay_end, end,
            start_to_close_timeout=t.STORE_TIMEOUT, retry_policy=t.STORE_RETRY,
            summary=f"record how replay {end.number} of dead letter {end.dead_letter} ended",
        )

    async def _reconcile(self, request: ReconcileRequest) -> ReconcileResult:
        deadline = workflow.now() + request.lookup_window
        delay = t.RECONCILE_FIRST_DELAY
        attempts = 0
        at_end = False
        # Runs started before the patch look up and resend from the main queue, as they did.
        queue = (target_task_queue(workflow.info().task_queue, request.action.adapter)
                 if workflow.patched(TARGET_TASK_QUEUE) else None)
        while True:
            attempts += 1
            found = await workflow.execute_activity_method(
                ReconcileActivities.lookup_write, request, task_queue=queue,
                start_to_close_timeout=t.LOOKUP_TIMEOUT, retry_policy=t.LOOKUP_RETRY,
                summary=f"look the write up at the target by key (try {attempts})",
            )
            if found is not None and found.status == "unverifiable":
                if workflow.patched(NO_LOOKUP_SKIPS_WINDOW):
                    break
                found = None  # runs started before the patch wait the window out, as they did
            if found is not None:
                return found.model_copy(update={"attempts": attempts})
            if workflow.now() + delay > deadline:
                # The next backoff look would be past the window: look once more at its end
                # (a durable timer; one look, so the history stays bounded). Runs started
                # before the patch stopped at the backoff's last look, as they did.
                if (at_end or workflow.now() >= deadline
                        or not workflow.patched(LAST_LOOK_AT_WINDOW_END)):
                    break
                delay, at_end = deadline - workflow.now(), True
            await workflow.sleep(delay)
            delay = min(delay * 2, t.RECONCILE_MAX_DELAY)
        try:
            resent = await workflow.execute_activity_method(
                ReconcileActivities.resend_write, request, task_queue=queue,
                start_to_close_timeout=t.EXECUTE_TIMEOUT, retry_policy=t.EXECUTE_RETRY,
                summary="one keyed resend, only to a target that dedupes by key",
            )
        except ActivityError as exc:
            # A replay's own cancel reaches its resend as this error (TRY_CANCEL: the activity
            # is asked to stop, not waited for; ADR 0077). Not a failed resend: the write is as
            # unknown as before and the replayed dead letter stays as the replay left it. A
            # first reconcile keeps its dead letter: it is the write's only one. Replays
            # started before the patch took it for a failed resend, as they did.
            if (request.replay_of is not None and is_cancelled_exception(exc)
                    and workflow.cancellation_reason() is not None
                    and workflow.patched(RESEND_CANCEL_ENDS_RUN)):
                raise
            resent = None
        if resent is not None and resent.status in ("resent", "rejected"):
            return resent.model_copy(update={"attempts": attempts})
        # A resend the approval no longer covers (ADR 0049) is dead-lettered with its own code
        # by the same one activity: the command sequence is the one older runs recorded.
        refused = resent.reason_code if resent is not None and resent.status == "refused" \
            else None
        await workflow.execute_activity_method(
            ReconcileActivities.dead_letter_write,
            request if refused is None else request.model_copy(update={"refused": refused}),
            start_to_close_timeout=t.STORE_TIMEOUT, retry_policy=t.STORE_RETRY,
            summary="not found and not safe to resend: dead letter for an operator",
        )
        return ReconcileResult(status="stopped", receipt=resent.receipt if resent else None,
                               attempts=attempts, reason_code=refused or "unreconciled_write")
