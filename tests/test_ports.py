"""tests/ports.py: the servers' ports come from the product's pool below the kernel's ephemeral
range (tests/stack/test_free_port.py checks that pool), never twice from two xdist processes of
one run, whether a test or the product in a test process picks them."""

from __future__ import annotations

import socket

import pytest

import tests.ports
import tollgate.dev.ports
from tests.ports import free_port, share_with_product, worker_slice
from tollgate.dev.ports import FLOOR, ephemeral_range, pool
from tollgate.dev.stack_config import free_port as product_free_port


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


def test_the_products_own_picks_come_from_this_processs_slice(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # As in the third of four xdist processes, with neither picker made yet.
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw2")
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "4")
    monkeypatch.setattr(tests.ports, "_picker", None)
    monkeypatch.setattr(tollgate.dev.ports, "_picker", None)
    share_with_product()
    mine = worker_slice(pool(ephemeral_range()), "gw2", "4")
    picked = [product_free_port() for _ in range(40)] + [free_port() for _ in range(40)]
    assert len(set(picked)) == 80  # one picker: never the same port twice
    assert all(port in mine for port in picked), (mine, sorted(picked))


def test_this_test_process_shares_its_picker_with_the_product() -> None:
    product_free_port()
    assert tollgate.dev.ports._picker is tests.ports.picker()  # tests/conftest.py did it
