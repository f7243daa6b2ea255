"""Taxonomy errors -> Temporal failures, one rule for every activity.

The class travels as ``ApplicationError.type`` (the retry policies in ``workflows.timeouts`` list
the non-retryable classes by that name) and the short code as the first detail, so a workflow can
branch on ``err.details[0]`` without parsing text. Activities do not call this themselves:
``activities.interceptor`` applies it to whatever taxonomy error an activity raises, ``from
None`` (the taxonomy message is written to be safe, an SDK exception further down the chain may
not be).
"""

from __future__ import annotations

from datetime import timedelta

from temporalio.exceptions import ApplicationError

from contracts.errors import RateLimited, TollgateError


def to_application_error(exc: TollgateError) -> ApplicationError:
    """Build the ``ApplicationError`` Temporal records for a classified failure.

    ``non_retryable`` comes from the class, so a business failure never burns retries even if a
    retry policy forgot to list it; a 429's ``retry_after`` becomes ``next_retry_delay`` so the
    next attempt waits as long as the target asked instead of the policy's backoff.
    """
    delay: timedelta | None = None
    if isinstance(exc, RateLimited) and exc.retry_after > 0:
        delay = timedelta(seconds=exc.retry_after)
    message = exc.code if exc.message == exc.code else f"{exc.code}: {exc.message}"
    return ApplicationError(
        message,
        exc.code,
        type=exc.error_class.value,
        non_retryable=not exc.retryable,
        next_retry_delay=delay,
    )
