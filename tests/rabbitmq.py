"""A throwaway RabbitMQ node for the broker tests: Debian's ``rabbitmq-server`` on a free
loopback port, its own node name, data and log dirs under a temp dir; stopped afterwards.

Each node gets an Erlang port mapper (epmd) of its own, on a port of its own
(``ERL_EPMD_PORT``), bound to loopback and stopped with the node. Two nodes starting at once
(two test processes) used to share one: the first to stop killed the epmd that had appeared
since it started, which could be the other's, and that node then failed to start.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from tests.ports import free_port

#: Debian installs the real launcher here; /usr/sbin/rabbitmq-server would su to "rabbitmq".
_LAUNCHERS = ("/usr/lib/rabbitmq/bin/rabbitmq-server",)


def rabbitmq_launcher() -> str | None:
    for path in _LAUNCHERS:
        if os.access(path, os.X_OK):
            return path
    return shutil.which("rabbitmq-server")


def _epmd_pids(port: int) -> set[int]:
    """The epmd processes serving ``port`` (started with ``ERL_EPMD_PORT`` set to it)."""
    mark = f"ERL_EPMD_PORT={port}".encode()
    pids = set()
    for comm in Path("/proc").glob("[0-9]*/comm"):
        with suppress(OSError):
            if (comm.read_text().strip() == "epmd"
                    and mark in (comm.parent / "environ").read_bytes().split(b"\0")):
                pids.add(int(comm.parent.name))
    return pids


@contextmanager
def rabbitmq_node(launcher: str, ready_timeout_s: float = 90.0) -> Iterator[str]:
    """Start a node and yield its AMQP URL."""
    base = Path(tempfile.mkdtemp(prefix="tollgate-rmq-"))
    port, dist, epmd = free_port(), free_port(), free_port()
    (base / "rabbit.conf").write_text(f"listeners.tcp.1 = 127.0.0.1:{port}\n"
                                      "loopback_users = none\n")
    (base / "enabled_plugins").write_text("[].\n")
    env = {**os.environ, "HOME": str(base),
           "RABBITMQ_NODENAME": f"tg{uuid.uuid4().hex[:8]}@localhost",
           "RABBITMQ_NODE_IP_ADDRESS": "127.0.0.1", "RABBITMQ_NODE_PORT": str(port),
           "RABBITMQ_DIST_PORT": str(dist), "ERL_EPMD_ADDRESS": "127.0.0.1",
           "ERL_EPMD_PORT": str(epmd),
           "RABBITMQ_MNESIA_BASE": str(base / "mnesia"), "RABBITMQ_LOG_BASE": str(base / "log"),
           "RABBITMQ_CONFIG_FILE": str(base / "rabbit.conf"),
           "RABBITMQ_ENABLED_PLUGINS_FILE": str(base / "enabled_plugins"),
           "RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS": "-kernel inet_dist_use_interface {127,0,0,1}"}
    log = (base / "server.out").open("wb")
    proc = subprocess.Popen([launcher], env=env, stdout=log, stderr=subprocess.STDOUT,  # noqa: S603
                            start_new_session=True, cwd=base)
    try:
        deadline = time.monotonic() + ready_timeout_s
        while True:
            with suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"rabbitmq-server did not start; see {base}/server.out")
            time.sleep(0.5)
        yield f"amqp://guest:guest@127.0.0.1:{port}/"
    finally:
        with suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            with suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
        for pid in _epmd_pids(epmd):
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        log.close()
        shutil.rmtree(base, ignore_errors=True)
