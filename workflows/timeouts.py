"""Every timeout and retry policy the workflows use, named once (no inline literals)."""

from __future__ import annotations

from datetime import timedelta

from temporalio.common import RetryPolicy

from contracts.drafting import DRAFT_MAX_ATTEMPTS
from contracts.errors import NON_RETRYABLE

_NON_RETRYABLE_TYPES = tuple(sorted(c.value for c in NON_RETRYABLE))


def _retry(initial: timedelta, maximum: timedelta, attempts: int = 0) -> RetryPolicy:
    """Exponential backoff (x2) that never retries a class the taxonomy calls final;
    ``attempts=0`` means until the activity's schedule-to-close, if any."""
    return RetryPolicy(initial_interval=initial, backoff_coefficient=2.0,
                       maximum_interval=maximum, maximum_attempts=attempts,
                       non_retryable_error_types=_NON_RETRYABLE_TYPES)


STORE_TIMEOUT = timedelta(seconds=10)
STORE_RETRY = _retry(timedelta(milliseconds=200), timedelta(seconds=10))

READ_TIMEOUT = timedelta(seconds=30)
#: The context read's lease, as the send's (EXECUTE_HEARTBEAT): a read a dead or frozen worker had
#: taken is retried elsewhere after 10 s, not after the whole 30 s (an attempt that ends within
#: 2.5 s, most of them, sends no heartbeat). Not a command change either.
READ_HEARTBEAT = timedelta(seconds=10)
READ_RETRY = _retry(timedelta(milliseconds=500), timedelta(seconds=30), attempts=20)

DRAFT_TIMEOUT = timedelta(seconds=60)
DRAFT_RETRY = _retry(timedelta(seconds=1), timedelta(seconds=20), attempts=DRAFT_MAX_ATTEMPTS)

#: A send retries only failures known to have happened before the write (and 429s after their
#: Retry-After); an unknown write is non-retryable here and goes to the reconciler.
EXECUTE_TIMEOUT = timedelta(seconds=30)
#: The send's lease: renewed by the worker while the attempt runs (activities/interceptor.py), so
#: a dead or frozen worker's attempt is retried after 10 s, not after the whole 30 s. Not a
#: command change: histories recorded without it replay unchanged.
EXECUTE_HEARTBEAT = timedelta(seconds=10)
EXECUTE_RETRY = _retry(timedelta(seconds=1), timedelta(seconds=60), attempts=10)

LOOKUP_TIMEOUT = timedelta(seconds=15)
LOOKUP_RETRY = READ_RETRY
RECONCILE_FIRST_DELAY = timedelta(seconds=1)
RECONCILE_MAX_DELAY = timedelta(seconds=60)
RECONCILE_WINDOW = timedelta(minutes=10)

#: Quiet shape (ADR 0056): an approved send shows EXECUTING in the search attribute only once it
#: has run this long; one that ends sooner shows its final state directly. Until then the record
#: stays listed as AWAITING_REVIEW, and a second decision is refused as for any closed review.
EXECUTING_SHOWN_AFTER = timedelta(seconds=10)

#: How often an action held by a closed kill switch looks again.
KILL_SWITCH_RECHECK = timedelta(seconds=30)

#: One sweep looks up at most a few hundred keys.
SWEEP_TIMEOUT = timedelta(minutes=5)
SWEEP_EVERY = timedelta(minutes=5)

#: How often an event held at the policy gate (its tenant's review backlog over the limit)
#: asks again. Each look is one local activity and one timer in the history.
GATE_HOLD_RECHECK = timedelta(minutes=10)

#: The escalation notice at the review SLA. Bounded, so a broken channel cannot hold the review
#: past its deadline: after the last attempt the review goes on waiting without the notice.
NOTIFY_TIMEOUT = timedelta(seconds=30)
NOTIFY_RETRY = _retry(timedelta(seconds=1), timedelta(seconds=30), attempts=8)

#: Tagging (docs/tagging.md): one model call per job attempt, cut at 20 s (the seed's budget;
#: the SDK client's own timeout is capped to it too: tollgate/runtime/tag_models.py). The job is
#: attempted by TAG_JOB_RETRY, Temporal's retry policy with the seed's numbers (three attempts,
#: 5 s doubling), which TagItemWorkflow applies itself between claims instead of handing it to
#: one activity: between two attempts the job row must say PENDING, and only the workflow knows
#: which attempt is the last, the one that writes FAILED (ADR 0042).
TAG_MODEL_TIMEOUT = timedelta(seconds=20)
TAG_MODEL_RETRY = _retry(timedelta(seconds=1), timedelta(seconds=1), attempts=1)
TAG_JOB_RETRY = RetryPolicy(initial_interval=timedelta(seconds=5), backoff_coefficient=2.0,
                            maximum_attempts=3)
TAG_JOB_ATTEMPTS = TAG_JOB_RETRY.maximum_attempts
TAG_JOB_BACKOFF = TAG_JOB_RETRY.initial_interval


#: A 429's Retry-After longer than the backoff is waited instead (patch tag-retry-after), up to
#: this: a model asking for an hour should not hold a job three hours before FAILED.
TAG_RETRY_AFTER_CAP = timedelta(minutes=5)


def tag_job_backoff(attempt: int) -> timedelta:
    """The wait after failed attempt ``attempt`` (1-based): 5 s, then 10 s."""
    return TAG_JOB_BACKOFF * TAG_JOB_RETRY.backoff_coefficient ** (attempt - 1)
