"""Issue 18 items 1 and 4: whatever stops `tollgate dev`, nothing it started outlives it.

The tests share one state folder, in order, so PostgreSQL is initialised once and every start
after the first is also a restart on existing data. A start costs some 12 s, so a test that ends
with the stack up hands it on: the refused second start leaves it to the left-over test, which
ends with a stack started over left-over servers, and SIGTERM stops that one. Run alone, each
test starts its own.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.stack.devproc import DevProcess, alive, descendants, ports_in_use, stack_folder
from tollgate.dev.guard import command_line

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def dev() -> Iterator[DevProcess]:
    with stack_folder() as state_dir:
        stack = DevProcess(state_dir)
        yield stack
        if stack.proc is not None and stack.proc.poll() is None:
            stack.proc.kill()


def running(dev: DevProcess) -> DevProcess:
    """The stack the test before left up, or a new one."""
    return dev if dev.proc is not None and dev.proc.poll() is None else dev.start()


def postgres_sockets(state_dir: Path) -> list[Path]:
    return list((state_dir / "pgdata").glob(".s.PGSQL.*"))


def test_a_second_start_on_a_running_folder_is_refused_in_one_line(dev: DevProcess) -> None:
    running(dev)
    # Its own output file: the running stack keeps writing to the first one (a sweep line at
    # the top of a 5-minute schedule once landed in the second's output).
    second = DevProcess(dev.state_dir, label="-second")
    with pytest.raises(AssertionError) as refused:
        second.start(within=30)
    assert second.proc is not None and second.proc.returncode == 1
    lines = second.output().strip().splitlines()
    assert dev.proc is not None
    assert len(lines) == 1 and "already running" in lines[0] and str(dev.proc.pid) in lines[0]
    assert "did not come up" in str(refused.value)
    assert (dev.state_dir / "endpoints.json").exists()  # the running stack is untouched
    assert dev.proc.poll() is None  # and still up: the next test stops it


def test_servers_left_over_from_a_killed_run_are_named_and_stopped(dev: DevProcess) -> None:
    running(dev)
    assert dev.proc is not None
    guard = [pid for pid in descendants(dev.proc.pid) if "tollgate.dev.guard" in command_line(pid)]
    temporal = int((dev.state_dir / "temporal.pid").read_text().split()[0])
    postmaster = int((dev.state_dir / "pgdata" / "postmaster.pid").read_text().split()[0])
    for pid in (*guard, dev.proc.pid):  # the guard too: nothing stops the servers now
        os.kill(pid, signal.SIGKILL)
    dev.wait_exit()
    assert alive({temporal, postmaster}, within=0) == {temporal, postmaster}

    dev.start()
    assert dev.output().count("left over from an earlier run") == 2  # Temporal and PostgreSQL
    assert alive({temporal, postmaster}, within=5) == set()
    assert dev.proc.poll() is None  # up on fresh servers: the SIGTERM test next stops it


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT],
                         ids=lambda s: s.name)
def test_a_stop_signal_stops_every_part_and_exits_0(dev: DevProcess, sig: signal.Signals) -> None:
    running(dev)
    pids = dev.stack_pids()
    assert len(pids) >= 4  # parent, guard, Temporal, postmaster at least
    assert dev.proc is not None
    dev.proc.send_signal(sig)

    assert dev.wait_exit() == 0, dev.output()
    assert alive(pids, within=5) == set(), dev.output()
    assert ports_in_use(dev.ports) == []
    assert postgres_sockets(dev.state_dir) == []
    assert not (dev.state_dir / "endpoints.json").exists()
    assert "Traceback" not in dev.output()


def test_a_killed_parent_takes_its_servers_with_it(dev: DevProcess) -> None:
    dev.start()
    pids = dev.stack_pids()
    assert dev.proc is not None
    dev.proc.send_signal(signal.SIGKILL)
    dev.wait_exit()

    assert alive(pids, within=15) == set()
    assert ports_in_use(dev.ports) == []
    assert postgres_sockets(dev.state_dir) == []
