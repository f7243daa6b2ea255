"""Loopback ports for the servers the tests start: ``free_port()``, the one helper for them.

The ports come from the product's pool below the kernel's ephemeral range, where no outgoing
connection can take one before the server binds it (``tollgate/dev/ports.py`` says why), with
its random start and bind check. What the tests add: each pytest-xdist process draws from its
own slice of that pool, so the processes of one run never hand out the same port.
"""

from __future__ import annotations

import os

from tollgate.dev.ports import PortPicker, ephemeral_range, pool


def worker_slice(ports: range, worker: str | None, count: str | None) -> range:
    """This process's share of ``ports``: pytest-xdist's ``gwN`` of ``count`` workers takes the
    N-th of ``count`` equal slices; a run without xdist takes them all."""
    if not worker or not worker.startswith("gw") or not count:
        return ports
    index, slices = int(worker[2:]), max(int(count), 1)
    size = len(ports) // slices
    if size == 0:
        return ports
    start = ports.start + (index % slices) * size
    return range(start, start + size)


_picker: PortPicker | None = None


def free_port() -> int:
    """A loopback port nothing holds, below the ephemeral range, from this process's slice."""
    global _picker  # made on first use: nothing read at import time
    if _picker is None:
        _picker = PortPicker(worker_slice(pool(ephemeral_range()),
                                          os.environ.get("PYTEST_XDIST_WORKER"),
                                          os.environ.get("PYTEST_XDIST_WORKER_COUNT")))
    return _picker()
