"""Every timeout and retry policy the workflows use, named once (no inline literals)."""

from __future__ import annotations

from datetime import timedelta

from temporalio.common import RetryPolicy

from workflows.errors import NON_RETRYABLE

_NON_RETRYABLE_TYPES = sorted(c.value for c in NON_RETRYABLE)

#: The draft activity's attempts; on the last one an unreadable answer is handed to a reviewer
#: (status ``unreadable``) instead of failing again.
DRAFT_MAX_ATTEMPTS = 3

STORE_TIMEOUT = timedelta(seconds=10)
STORE_RETRY = RetryPolicy(
    initial_interval=timedelta(milliseconds=200),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=10),
    non_retryable_error_types=_NON_RETRYABLE_TYPES,
)

READ_TIMEOUT = timedelta(seconds=30)
READ_RETRY = RetryPolicy(
    initial_interval=timedelta(milliseconds=500),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=30),
    maximum_attempts=20,
    non_retryable_error_types=_NON_RETRYABLE_TYPES,
)

DRAFT_TIMEOUT = timedelta(seconds=60)
DRAFT_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=20),
    maximum_attempts=DRAFT_MAX_ATTEMPTS,
    non_retryable_error_types=_NON_RETRYABLE_TYPES,
)

#: A send retries only failures known to have happened before the write (and 429s after their
#: Retry-After); an unknown write is non-retryable here and goes to the reconciler.
EXECUTE_TIMEOUT = timedelta(seconds=30)
EXECUTE_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=60),
    maximum_attempts=10,
    non_retryable_error_types=_NON_RETRYABLE_TYPES,
)

LOOKUP_TIMEOUT = timedelta(seconds=15)
LOOKUP_RETRY = READ_RETRY
RECONCILE_FIRST_DELAY = timedelta(seconds=1)
RECONCILE_MAX_DELAY = timedelta(seconds=60)
RECONCILE_WINDOW = timedelta(minutes=10)

#: Defaults when a policy rule names none.
DEFAULT_REVIEW_SLA = timedelta(hours=4)
DEFAULT_REVIEW_DEADLINE = timedelta(hours=24)

#: How long a producer's intake update may wait for validation before it is answered anyway.
INTAKE_WAIT = timedelta(seconds=30)
