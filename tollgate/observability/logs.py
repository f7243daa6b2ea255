"""Logging for every process the project starts: JSON lines through structlog, with the
standard library's loggers (temporalio, httpx, asyncpg, ``workflow.logger``) passed through the
same processors, so redaction is one processor that no call site and no library can skip."""

from __future__ import annotations

import logging
import sys
from collections.abc import MutableMapping
from typing import IO, Any

import structlog

from policies.redaction import scrub_deep

#: Loggers that are chatty at INFO and say nothing an operator needs from a dev run.
_QUIET = {"httpx": logging.WARNING, "httpcore": logging.WARNING, "aiohttp.access": logging.WARNING}


def redact_processor(
    _: Any, __: str, event_dict: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """Deep redaction of every field (see ``policies.redaction.scrub_deep``)."""
    for key in list(event_dict):
        event_dict[key] = scrub_deep(event_dict[key], key=key)
    return event_dict


def _shared() -> list[Any]:
    return [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso"),
        structlog.stdlib.ExtraAdder(),
        # Tracebacks become one string field before redaction, so their messages are scrubbed.
        structlog.processors.format_exc_info,
        redact_processor,
    ]


def configure_logging(level: int = logging.INFO, *, stream: IO[str] | None = None) -> None:
    """Send structlog and the standard library's logging to ``stream`` (default stderr) as
    redacted JSON lines. Call once, at the entry point of a process."""
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=_shared(),
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                    structlog.processors.JSONRenderer(default=str)],
    )
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    for name, quiet in _QUIET.items():
        logging.getLogger(name).setLevel(max(level, quiet))
    structlog.configure(
        processors=[*_shared(), structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.stdlib.LoggerFactory(),
        cache_logger_on_first_use=False,
    )
