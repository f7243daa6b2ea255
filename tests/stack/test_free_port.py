"""tollgate/dev/ports.py: a port the stack, the demo, bench and chaos pick for a server comes from
below the kernel's ephemeral range (where an outgoing connection can never take it before the
server binds it), and is never one something holds."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tollgate.dev.ports import DEFAULT_EPHEMERAL, FLOOR, PortPicker, ephemeral_range, pool
from tollgate.dev.stack_config import free_port


def test_the_stacks_ports_are_below_the_ephemeral_range_and_free() -> None:
    ephemeral = ephemeral_range()
    ports = [free_port() for _ in range(50)]
    assert len(set(ports)) == 50
    assert all(FLOOR <= port < ephemeral.start for port in ports), (ephemeral, ports)
    for port in ports:
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))


def test_the_range_is_read_from_the_kernel_file_else_linux_default(tmp_path: Path) -> None:
    source = tmp_path / "ip_local_port_range"
    source.write_text("40000\t50000\n")
    assert ephemeral_range(source) == range(40000, 50001)
    for bad in ("", "40000", "x y", "50000 40000", "0 70000"):
        source.write_text(bad)
        assert ephemeral_range(source) == DEFAULT_EPHEMERAL
    assert ephemeral_range(tmp_path / "missing") == DEFAULT_EPHEMERAL


def test_the_pool_avoids_the_ephemeral_range_wherever_it_sits() -> None:
    assert pool(range(32768, 61000)) == range(FLOOR, 32768)
    assert pool(range(1024, 50000)) == range(50000, 65536)  # nothing below: above it
    assert pool(range(1024, 65536)) == range(FLOOR, 32768)  # no room anywhere: best effort


def test_a_port_something_holds_is_never_handed_out() -> None:
    port = free_port()
    pick = PortPicker(range(port, port + 1))
    with socket.socket() as held:
        held.bind(("127.0.0.1", port))
        held.listen()
        with pytest.raises(RuntimeError, match=f"no free port in {port}-{port}"):
            pick()
    assert pick() == port  # released: handed out again
