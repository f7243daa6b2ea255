"""Loopback ports for the servers the dev tools start on a port left at 0: ``free_port()``.

Binding port 0 and closing the socket again hands out a port from the kernel's ephemeral range
(``/proc/sys/net/ipv4/ip_local_port_range``). Between that close and the server's bind, any
outgoing connection on the machine may take the port as its source port, and the server then
fails to start. So the ports come from below that range, where the kernel never picks a source
port: only another server can hold one. Each process starts at a random place in the pool
(another process on the machine most likely draws elsewhere) and bind-checks each port before
handing it out. The tests' helper (``tests/ports.py``) draws from the same pool, one slice per
pytest-xdist process.
"""

from __future__ import annotations

import random
import socket
import threading
from pathlib import Path

#: Where the kernel says its ephemeral range is, and Linux's default when it cannot be read.
RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")
DEFAULT_EPHEMERAL = range(32768, 61000)
#: The pool's floor: above the ports the services and the stack's defaults use (5432, 7233,
#: 8233, 830x, 8400, 946x), so a picked port is never one a developer's server expects.
FLOOR = 10000
#: Fewer free ports than this below (or above) the ephemeral range and that side is not used.
ENOUGH = 3000


def ephemeral_range(source: Path = RANGE_FILE) -> range:
    """The kernel's ephemeral ports (the file's two numbers, both included)."""
    try:
        low, high = (int(n) for n in source.read_text().split())
    except (OSError, ValueError):
        return DEFAULT_EPHEMERAL
    return range(low, high + 1) if 0 < low <= high <= 65535 else DEFAULT_EPHEMERAL


def pool(ephemeral: range) -> range:
    """The ports to hand out: below the ephemeral range, else above it; a machine whose range
    leaves neither side room gets the ports from the floor up to the default range."""
    if ephemeral.start - FLOOR >= ENOUGH:
        return range(FLOOR, ephemeral.start)
    if 65536 - ephemeral.stop >= ENOUGH:
        return range(ephemeral.stop, 65536)
    return range(FLOOR, DEFAULT_EPHEMERAL.start)


def is_free(port: int) -> bool:
    """Nothing holds ``port`` on 127.0.0.1 (nor on every address). No ``SO_REUSEADDR``: a port
    with connections still in TIME_WAIT counts as taken, so a stricter check than a server's."""
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


class PortPicker:
    """Hands out the ports of ``ports`` in turn from a random start, skipping taken ones; a
    port comes round again only after every other port of the range has been handed out."""

    def __init__(self, ports: range) -> None:
        self._ports = ports
        self._next = random.randrange(len(ports))  # spreading, not secrecy
        self._lock = threading.Lock()

    def __call__(self) -> int:
        with self._lock:
            for _ in range(len(self._ports)):
                port = self._ports[self._next]
                self._next = (self._next + 1) % len(self._ports)
                if is_free(port):
                    return port
        raise RuntimeError(f"no free port in {self._ports.start}-{self._ports.stop - 1}")


_picker: PortPicker | None = None
_made = threading.Lock()


def free_port() -> int:
    """A loopback port nothing holds, from below the kernel's ephemeral range."""
    global _picker  # made on first use: nothing read at import time
    with _made:
        if _picker is None:
            _picker = PortPicker(pool(ephemeral_range()))
    return _picker()
