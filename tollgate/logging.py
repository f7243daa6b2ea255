"""structlog set-up: JSON when not on a terminal, context from contextvars, redaction as a
processor so that no call site can forget it."""

from __future__ import annotations

import logging
import sys
from collections.abc import MutableMapping
from typing import Any

import structlog

from policies.redaction import SAFE_KEYS, scrub_text

#: Keys whose values are never logged, whatever a call site passes.
_DROP = frozenset({"body", "message_text", "payload", "context", "secret", "api_key", "token",
                   "signature", "raw", "prompt", "first_name", "pet_name", "phone", "email"})


def redact_processor(
    _: Any, __: str, event_dict: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    for key in list(event_dict):
        if key in _DROP:
            event_dict[key] = "[redacted]"
        elif key not in SAFE_KEYS and isinstance(event_dict[key], str):
            event_dict[key] = scrub_text(event_dict[key])
    return event_dict


def configure_logging(level: int = logging.INFO) -> None:
    renderer: Any = (structlog.dev.ConsoleRenderer() if sys.stderr.isatty()
                     else structlog.processors.JSONRenderer())
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso"),
            redact_processor,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )
