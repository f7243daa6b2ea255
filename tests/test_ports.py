"""tests/ports.py: the servers' ports come from below the kernel's ephemeral range (where an
outgoing connection of another process can never take one before the server binds it), never
twice from two xdist processes of one run, and never one something holds."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.ports import (
    DEFAULT_EPHEMERAL,
    FLOOR,
    PortPicker,
    ephemeral_range,
    free_port,
    pool,
    worker_slice,
)


def test_the_ports_handed_out_are_below_the_ephemeral_range_and_free() -> None:
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


def test_xdist_processes_of_one_run_draw_from_disjoint_slices() -> None:
    ports = pool(range(32768, 61000))
    slices = [set(worker_slice(ports, f"gw{n}", "3")) for n in range(3)]
    assert not slices[0] & slices[1] and not slices[1] & slices[2] and not slices[0] & slices[2]
    assert all(s and s <= set(ports) for s in slices)
    assert worker_slice(ports, None, None) == ports  # no xdist: the whole pool
    assert worker_slice(ports, "master", "3") == ports


def test_a_port_something_holds_is_never_handed_out() -> None:
    port = free_port()
    pick = PortPicker(range(port, port + 1))
    with socket.socket() as held:
        held.bind(("127.0.0.1", port))
        held.listen()
        with pytest.raises(RuntimeError, match=f"no free port in {port}-{port}"):
            pick()
    assert pick() == port  # released: handed out again
