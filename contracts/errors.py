"""The error taxonomy: every failure in Tollgate belongs to exactly one class.

    TollgateError                  base; carries ``error_class`` and a short machine ``code``
    ├── InvalidInput               invalid: bad schema, bad signature, unknown tenant -> quarantine
    ├── ConflictError              conflict: older event, same key with other payload -> no effect
    ├── RetryableError             retryable: DB blip, 503 on a read -> backoff + jitter
    │   ├── RateLimited            rate-limited: 429, honours ``retry_after``
    │   └── TimeoutBeforeWrite     timeout-before-write: nothing left the process -> same key again
    ├── UnknownWrite               unknown-write: the request left, the answer did not come back
    ├── RejectedError              rejected: target 4xx on a business rule, reviewer reject
    ├── DeadLetterError            dead-letter: retries exhausted, schema drift -> operator
    └── SecurityIncident           security incident: injection, cross-tenant, signature burst

The class name travels as ``ApplicationError.type`` (activities convert with
``activities.errors.to_application_error``), so retry policies list the non-retryable ones by
name and metrics and dead letters group by it. This module is pure: workflows import it.
Messages must never carry secrets or customer data; put identifiers in ``code``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar


class ErrorClass(StrEnum):
    INVALID = "invalid"
    CONFLICT = "conflict"
    RETRYABLE = "retryable"
    RATE_LIMITED = "rate_limited"
    TIMEOUT_BEFORE_WRITE = "timeout_before_write"
    UNKNOWN_WRITE = "unknown_write"
    REJECTED = "rejected"
    DEAD_LETTER = "dead_letter"
    SECURITY_INCIDENT = "security_incident"


#: Classes Temporal must never retry on its own. An unknown write is here on purpose: it is
#: reconciled by looking the key up, never by sending again blind.
NON_RETRYABLE: frozenset[ErrorClass] = frozenset(
    {
        ErrorClass.INVALID,
        ErrorClass.CONFLICT,
        ErrorClass.UNKNOWN_WRITE,
        ErrorClass.REJECTED,
        ErrorClass.DEAD_LETTER,
        ErrorClass.SECURITY_INCIDENT,
    }
)


class TollgateError(Exception):
    """Base of every classified failure.

    Args:
        code: short machine-readable reason (``bad_signature``, ``target_422``).
        message: human text; never secrets or customer personal data.
    """

    error_class: ClassVar[ErrorClass] = ErrorClass.RETRYABLE

    def __init__(self, code: str, message: str | None = None) -> None:
        self.code = code
        self.message = message or code
        super().__init__(f"{self.error_class.value}/{code}: {self.message}")

    @property
    def retryable(self) -> bool:
        return self.error_class not in NON_RETRYABLE


class InvalidInput(TollgateError):
    error_class = ErrorClass.INVALID


class ConflictError(TollgateError):
    error_class = ErrorClass.CONFLICT


class RetryableError(TollgateError):
    error_class = ErrorClass.RETRYABLE


class RateLimited(RetryableError):
    error_class = ErrorClass.RATE_LIMITED

    def __init__(self, code: str, message: str | None = None, *, retry_after: float) -> None:
        self.retry_after = retry_after
        super().__init__(code, message)


class TimeoutBeforeWrite(RetryableError):
    error_class = ErrorClass.TIMEOUT_BEFORE_WRITE


class UnknownWrite(TollgateError):
    error_class = ErrorClass.UNKNOWN_WRITE


class RejectedError(TollgateError):
    error_class = ErrorClass.REJECTED


class DeadLetterError(TollgateError):
    error_class = ErrorClass.DEAD_LETTER


class SecurityIncident(TollgateError):
    error_class = ErrorClass.SECURITY_INCIDENT
