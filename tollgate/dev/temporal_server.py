"""The Temporal dev server as the stack runs it: its command line, its launch (a session of its
own, an owner-only log) and its stop. The stack watches it, writes its pid file and waits for
its ports."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tollgate.dev.stack_config import (
    SPEED_ARGS,
    Ports,
    search_attribute_args,
    temporal_binary,
    temporal_log,
)


def dev_server_args(ports: Ports, state_dir: Path, codec_endpoint: str | None) -> list[str]:
    """The dev server's command line; the Web UI decodes through ``codec_endpoint`` when given."""
    args = [
        temporal_binary(), "server", "start-dev",
        "--ip", "127.0.0.1", "--port", str(ports.temporal),
        "--ui-port", str(ports.ui),
        "--db-filename", str(state_dir / "temporal.db"),
        *SPEED_ARGS, "--log-level", "error",
    ]
    args += search_attribute_args()
    if codec_endpoint is not None:
        args += ["--ui-codec-endpoint", codec_endpoint]
    return args


def launch_dev_server(args: list[str], state_dir: Path) -> subprocess.Popen[bytes]:
    """Start the server ``args`` name, logging to the state folder's ``temporal.log``."""
    log = temporal_log(state_dir)  # lives with the process
    # Its own session: a Ctrl-C at the terminal reaches `tollgate dev` only, which then
    # stops the server in order (after the worker has drained). umask 077: see temporal_log.
    return subprocess.Popen(  # noqa: S603 - fixed arguments, our own binary
        args, stdout=log, stderr=log, stdin=subprocess.DEVNULL,
        start_new_session=True, umask=0o077)


def stop_dev_server(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL after 15 s."""
    proc.terminate()
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
