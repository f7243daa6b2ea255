"""Logging for every process the project starts: JSON lines through structlog, with the
standard library's loggers (temporalio, httpx, asyncpg, ``workflow.logger``) passed through the
same processors, so redaction is one processor that no call site and no library can skip."""

from __future__ import annotations

import logging
import sys
from collections.abc import MutableMapping
from typing import IO, TYPE_CHECKING, Any


def _leave_out_unused_extras() -> None:
    """Keep two libraries' optional extras, which no process of ours uses, out of its imports.

    structlog imports ``rich``, when it can, for its console renderer's tracebacks
    (``structlog.dev``) and for the reprs of ``dict_tracebacks`` (``structlog.tracebacks``); our
    lines are JSON and their tracebacks ``format_exc_info``'s, the standard library's. httpx
    imports its own command line (``httpx._main``: rich, pygments) when both are installed.
    Together ≈ 0.3 s of a console script's start here (docs/performance.md, "CLI start-up").
    A ``None`` in ``sys.modules`` makes an import fail, and both libraries take their own
    fallbacks: structlog's entry for rich goes again at once, so the CLI's tables still import
    rich when they print; httpx's command line stays refused for the process
    (docs/adr/0068-what-a-command-does-not-use-it-does-not-import.md).
    """
    if "httpx" not in sys.modules:
        sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
    if "structlog" in sys.modules or "rich" in sys.modules:
        return
    sys.modules["rich"] = None  # type: ignore[assignment]
    try:
        import structlog  # noqa: F401
    finally:
        del sys.modules["rich"]


_leave_out_unused_extras()

import structlog  # noqa: E402

from policies.redaction import scrub_deep  # noqa: E402

if TYPE_CHECKING:
    from temporalio.runtime import LoggingConfig

#: Loggers that are chatty at INFO and say nothing an operator needs from a dev run.
_QUIET = {"httpx": logging.WARNING, "httpcore": logging.WARNING, "aiohttp.access": logging.WARNING}


#: Python's level for each of the Rust core's (``TOLLGATE_SDK_LOG_LEVEL``); OFF lets none by.
_SDK_LEVELS = {"ERROR": logging.ERROR, "WARN": logging.WARNING}


def sdk_logging(level: str) -> LoggingConfig:
    """The Temporal SDK's own log lines (its Rust core) at ``level`` and above, forwarded to
    the ``temporalio.core`` logger: so they leave through the one handler, redacted, on stderr.

    Left to itself the core prints its lines (``WARN temporalio_client::retry …``) on stdout,
    among a command's answers, at WARN and above.
    """
    from temporalio.runtime import LogForwardingConfig, LoggingConfig, TelemetryFilter

    core = logging.getLogger("temporalio.core")
    # Asked for, they show even where the process logs only its warnings (every CLI command).
    core.setLevel(_SDK_LEVELS.get(level, logging.CRITICAL + 1))
    return LoggingConfig(filter=TelemetryFilter(core_level=level, other_level=level),
                         forwarding=LogForwardingConfig(logger=core))


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
