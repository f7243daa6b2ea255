"""The order ``make test`` hands modules out in (tests/scheduling.py): longest first by the
committed table, the stack modules as one scope, unknown modules by their test count."""

from __future__ import annotations

from pathlib import Path

from tests.scheduling import (
    STACK,
    STACK_MODULES,
    durations_from_report,
    load_durations,
    longest_first,
    scope_of,
)


def scopes(*nodeids: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for nodeid in nodeids:
        found.setdefault(scope_of(nodeid), []).append(nodeid)
    return found


def test_a_long_module_with_one_test_goes_before_short_modules_with_many() -> None:
    work = scopes("tests/docs/test_readme.py::t",
                  *(f"tests/a/test_many.py::t{i}" for i in range(50)),
                  "tests/b/test_few.py::t1", "tests/b/test_few.py::t2")
    table = {"tests/docs/test_readme.py": 113.0, "tests/a/test_many.py": 20.0,
             "tests/b/test_few.py": 30.0}
    assert longest_first(work, table) == ["tests/docs/test_readme.py", "tests/b/test_few.py",
                                          "tests/a/test_many.py"]


def test_the_stack_modules_are_one_scope_reckoned_at_their_sum() -> None:
    work = scopes(*(f"{m}::t" for m in STACK_MODULES), "tests/docs/test_readme.py::t")
    assert set(work) == {STACK, "tests/docs/test_readme.py"}
    table = dict.fromkeys(STACK_MODULES, 20.0) | {"tests/docs/test_readme.py": 113.0}
    assert longest_first(work, table)[0] == STACK  # 7 x 20 s together outlast 113 s


def test_a_module_not_in_the_table_is_reckoned_at_the_mean_seconds_per_test() -> None:
    # The table's mean is 2 s a test: 30 new tests (60 s) go between the 100 s and the 10 s.
    work = scopes(*(f"tests/new/test_new.py::t{i}" for i in range(30)),
                  *(f"tests/x/test_long.py::t{i}" for i in range(50)), "tests/y/test_short.py::t")
    table = {"tests/x/test_long.py": 100.0, "tests/y/test_short.py": 2.0}
    assert longest_first(work, table) == ["tests/x/test_long.py", "tests/new/test_new.py",
                                          "tests/y/test_short.py"]
    # With no table at all, the order is xdist's own: most tests first.
    assert longest_first(work, {}) == ["tests/x/test_long.py", "tests/new/test_new.py",
                                       "tests/y/test_short.py"]


def test_the_table_is_read_from_a_durations_report_and_committed(tmp_path: Path) -> None:
    report = """\
============================= slowest durations ==============================
113.56s call     tests/docs/test_readme.py::test_the_readme_lines_work_as_written
6.48s setup    tests/docs/test_readme.py::test_the_readme_lines_work_as_written
11.69s call     tests/faults/test_soak.py::test_a[no_dedupe]
0.50s teardown tests/faults/test_soak.py::test_a[dedupe]
1939 passed in 630.30s (0:10:30)
"""
    assert durations_from_report(report) == {"tests/docs/test_readme.py": 120.0,
                                             "tests/faults/test_soak.py": 12.2}
    assert load_durations(tmp_path / "missing.json") == {}
    committed = load_durations()
    assert set(STACK_MODULES) <= set(committed), set(STACK_MODULES) - set(committed)
    assert all(seconds >= 0 for seconds in committed.values())
