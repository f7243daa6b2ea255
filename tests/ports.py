"""Loopback ports for the servers the tests start: ``free_port()``, the one helper for them.

The ports come from the product's pool below the kernel's ephemeral range, where no outgoing
connection can take one before the server binds it (``tollgate/dev/ports.py`` says why), with
its random start and bind check. What the tests add: each pytest-xdist process draws from its
own slice of that pool, so the processes of one run never hand out the same port; and the
product's own picks in a test process (the stack's Temporal and UI ports when a test leaves them
at 0, the demo's, chaos's, a restarted UI's) come from that same slice (``share_with_product``,
which tests/conftest.py calls once per process).
"""

from __future__ import annotations

import os

from tollgate.dev import ports as product
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


def picker() -> PortPicker:
    """This process's picker over its slice, made on first use (nothing read at import time)."""
    global _picker
    if _picker is None:
        _picker = PortPicker(worker_slice(pool(ephemeral_range()),
                                          os.environ.get("PYTEST_XDIST_WORKER"),
                                          os.environ.get("PYTEST_XDIST_WORKER_COUNT")))
    return _picker


def free_port() -> int:
    """A loopback port nothing holds, below the ephemeral range, from this process's slice."""
    return picker()()


def share_with_product() -> None:
    """``tollgate.dev.ports.free_port`` in this process hands out from this process's picker.

    Its own picker starts at a random place in the whole pool, slices of other xdist processes
    included: it could hand out a port another process has just handed out and not yet bound (a
    Temporal dev server binds seconds after its port is picked), and one of the two servers
    would then fail to start. One picker for both also never hands out a port twice here.
    """
    product._picker = picker()  # the product's module global, set before its first use
