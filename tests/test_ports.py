"""tests/ports.py: the servers' ports come from the product's pool below the kernel's ephemeral
range (tests/stack/test_free_port.py checks that pool), never twice from two xdist processes of
one run."""

from __future__ import annotations

import socket

from tests.ports import free_port, worker_slice
from tollgate.dev.ports import FLOOR, ephemeral_range, pool


def test_the_ports_handed_out_are_below_the_ephemeral_range_and_free() -> None:
    ephemeral = ephemeral_range()
    ports = [free_port() for _ in range(50)]
    assert len(set(ports)) == 50
    assert all(FLOOR <= port < ephemeral.start for port in ports), (ephemeral, ports)
    for port in ports:
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))


def test_xdist_processes_of_one_run_draw_from_disjoint_slices() -> None:
    ports = pool(range(32768, 61000))
    slices = [set(worker_slice(ports, f"gw{n}", "3")) for n in range(3)]
    assert not slices[0] & slices[1] and not slices[1] & slices[2] and not slices[0] & slices[2]
    assert all(s and s <= set(ports) for s in slices)
    assert worker_slice(ports, None, None) == ports  # no xdist: the whole pool
    assert worker_slice(ports, "master", "3") == ports
