"""TagItemWorkflow: tag one saved item, with a job row that tells the truth (docs/tagging.md).

    claim (PENDING -> PROCESSING, load item + user's tags)
      -> suggest_tags on the draft queue (any provider; unreadable answers raise)
      -> normalise (policies.tagging, pure)
      -> apply: match exact / trigram / new, skip removed, link, SUCCEEDED   (one transaction)
    a failed attempt -> PENDING with the error, sleep (the backoff, or a 429's Retry-After when
                        longer), claim again;
    the last attempt  -> FAILED (only then; a manual retry starts a new run from FAILED)

The attempts are the workflow's, not the activity's: between two the row must read PENDING, and
only the workflow knows which attempt is the last. A job not in PENDING when claimed (a second
start of the same run, or already done) ends the run without touching anything.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError, TimeoutError

with workflow.unsafe.imports_passed_through():
    from activities.tagging import TaggingActivities, TagModelActivities
    from contracts.errors import NON_RETRYABLE
    from contracts.tagging import (
        ApplyTagsRequest,
        ClaimRequest,
        JobFailure,
        JobState,
        TagItemRequest,
        TagItemResult,
        TagPrompt,
    )
    from policies.tagging import normalise_suggestions
    from workflows import timeouts as t
    from workflows.process_event import DRAFT_TASK_QUEUE

_FINAL_TYPES = frozenset(c.value for c in NON_RETRYABLE)
#: A rate-limited model's Retry-After becomes the wait before the next attempt (docs/patches.md).
RETRY_AFTER_PATCH = "tag-retry-after"


@workflow.defn
class TagItemWorkflow:
    def __init__(self) -> None:
        self._state = JobState.PENDING

    @workflow.query
    def state(self) -> str:
        return self._state.value

    @workflow.run
    async def run(self, request: TagItemRequest) -> TagItemResult:
        for attempt in range(1, t.TAG_JOB_ATTEMPTS + 1):
            found = await workflow.execute_activity_method(
                TaggingActivities.claim_tag_job, ClaimRequest(item_id=request.item_id,
                                                              attempt=attempt),
                start_to_close_timeout=t.STORE_TIMEOUT, retry_policy=t.STORE_RETRY)
            if not found.claimed:
                self._state = found.state
                return TagItemResult(item_id=request.item_id, state=found.state)
            self._state = JobState.PROCESSING
            try:
                answer = await workflow.execute_activity_method(
                    TagModelActivities.suggest_tags,
                    TagPrompt(item_id=request.item_id, title=found.title,
                              description=found.description, text=found.text,
                              url=found.url,
                              user_tags=found.user_tags),
                    task_queue=DRAFT_TASK_QUEUE, start_to_close_timeout=t.TAG_MODEL_TIMEOUT,
                    retry_policy=t.TAG_MODEL_RETRY)
                tags = normalise_suggestions(answer.suggestions)
                result = await workflow.execute_activity_method(
                    TaggingActivities.apply_item_tags,
                    ApplyTagsRequest(item_id=request.item_id, tags=tags, attempt=attempt),
                    start_to_close_timeout=t.STORE_TIMEOUT, retry_policy=t.STORE_RETRY)
            except ActivityError as err:
                error, final_class = _reason(err)
                final = final_class or attempt == t.TAG_JOB_ATTEMPTS
                await workflow.execute_activity_method(
                    TaggingActivities.record_tag_failure,
                    JobFailure(item_id=request.item_id, attempt=attempt, final=final,
                               error=error),
                    start_to_close_timeout=t.STORE_TIMEOUT, retry_policy=t.STORE_RETRY)
                if final:
                    self._state = JobState.FAILED
                    return TagItemResult(item_id=request.item_id, state=JobState.FAILED,
                                         error=error)
                self._state = JobState.PENDING
                await workflow.sleep(_wait(err, attempt))
                continue
            self._state = JobState.SUCCEEDED
            return result
        raise ApplicationError("unreachable: every attempt returns", type="dead_letter")


def _wait(err: ActivityError, attempt: int) -> timedelta:
    """The backoff before the next attempt, or a 429's Retry-After when the model asked for
    longer (capped). Runs started before the patch keep the plain backoff: the two differ only
    in the timer's duration, which replay cannot see, so the patch is what keeps them apart."""
    wait = t.tag_job_backoff(attempt)
    cause = err.cause
    asked = cause.next_retry_delay if isinstance(cause, ApplicationError) else None
    if asked is not None and asked > wait and workflow.patched(RETRY_AFTER_PATCH):
        return min(asked, t.TAG_RETRY_AFTER_CAP)
    return wait


def _reason(err: ActivityError) -> tuple[str, bool]:
    """A safe one-line reason (taxonomy class and code, never the model's text) and whether the
    class is final, so a business failure does not burn the remaining attempts."""
    cause = err.cause
    if isinstance(cause, ApplicationError):
        kind = cause.type or "retryable"
        return f"{kind}: {cause.message}"[:500], kind in _FINAL_TYPES
    if isinstance(cause, TimeoutError):
        return "timeout: the model did not answer in time", False
    return f"retryable: {type(cause).__name__}", False
