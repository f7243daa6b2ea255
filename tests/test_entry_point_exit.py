"""A long-running entry point (``python worker.py``, the Redis intake) frees what its coroutine
held before the process exits, also when a start-up check ends it with one line: the Temporal
client, freed during finalisation instead, can abort the process (tollgate/runtime/entry.py)."""

import weakref

import pytest

from tollgate.runtime.entry import run_main


class Held:
    """A reference cycle, as the SDK's client is in: only a collection frees it."""

    def __init__(self) -> None:
        self.me = self


def test_a_refused_start_frees_what_it_held_then_exits_with_its_line() -> None:
    found: list[weakref.ref[Held]] = []

    async def refuse() -> None:
        held = Held()
        found.append(weakref.ref(held))
        raise SystemExit("TOLLGATE_HEALTH_PORT: cannot serve the health endpoints")

    with pytest.raises(SystemExit) as stop:
        run_main(refuse())
    assert stop.value.code == "TOLLGATE_HEALTH_PORT: cannot serve the health endpoints"
    assert found[0]() is None  # collected before the exit, not during finalisation


def test_ctrl_c_ends_it_quietly_and_frees_it_too() -> None:
    found: list[weakref.ref[Held]] = []

    async def interrupted() -> None:
        held = Held()
        found.append(weakref.ref(held))
        raise KeyboardInterrupt

    run_main(interrupted())
    assert found[0]() is None
