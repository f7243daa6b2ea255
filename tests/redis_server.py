"""A throwaway Redis for the stream intake tests: Debian's ``redis-server`` on a free loopback
port, its working dir under a temp dir, no persistence files left behind; stopped afterwards."""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from tests.ports import free_port


def redis_binary() -> str | None:
    return shutil.which("redis-server")


def _answers_ping(port: int) -> bool:
    with suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1) as conn:
        conn.sendall(b"PING\r\n")
        return conn.recv(16).startswith(b"+PONG")
    return False


@contextmanager
def redis_node(binary: str, ready_timeout_s: float = 30.0) -> Iterator[str]:
    """Start a server and yield its URL."""
    base = Path(tempfile.mkdtemp(prefix="tollgate-redis-"))
    port = free_port()
    log = (base / "server.out").open("wb")
    proc = subprocess.Popen(  # noqa: S603
        [binary, "--bind", "127.0.0.1", "--port", str(port), "--dir", str(base),
         "--save", "", "--appendonly", "no", "--protected-mode", "yes"],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=base)
    try:
        deadline = time.monotonic() + ready_timeout_s
        while not _answers_ping(port):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not start; see {base}/server.out")
            time.sleep(0.1)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        log.close()
        shutil.rmtree(base, ignore_errors=True)
