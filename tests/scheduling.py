"""How ``make test`` (``pytest -n 3 --dist loadgroup``) hands modules to its processes.

Each module's tests run on one process, so its servers and database (module-scoped fixtures)
start once; the modules that start whole ``tollgate dev`` stacks run together on one, one after
another (``STACK_MODULES``). The run ends when the last process does, so the longest scopes go
first (longest processing time first): a two-minute module handed out near the end would run
on alone while the other processes sit idle.

The seconds come from ``tests/durations.json``, one figure per module (set-up and teardown
included), from one whole run; a module not in it is reckoned at the table's mean seconds per
test. The figures are only an order: noisy ones (other work on the machine) still sort right.
Regenerate the table after a run that printed every duration::

    .venv/bin/pytest -n 3 --dist loadgroup -q --durations=0 -p no:cacheprovider > /tmp/dur.log
    .venv/bin/python -m tests.scheduling /tmp/dur.log
"""

from __future__ import annotations

import json
import re
import sys
from collections import OrderedDict, defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

DURATIONS_FILE = Path(__file__).with_name("durations.json")
#: Modules that each start a whole ``tollgate dev`` stack (or several) share one xdist worker
#: and run one after another: two stacks at once on two cores miss the shutdown and start-up
#: bounds those tests assert.
STACK_MODULES = ("tests/stack/test_stack_restart.py", "tests/stack/test_stack_signals.py",
                 "tests/stack/test_stack_stop_wedged.py",
                 "tests/deploy/test_scale_out.py", "tests/cli/test_against_stack.py",
                 "tests/e2e/test_demo.py", "tests/e2e/test_chaos.py")
STACK = "stack"
#: A line of ``--durations=0``: "12.34s call     tests/x/test_y.py::test_z[param]".
_DURATION = re.compile(r"^\s*([\d.]+)s\s+(?:setup|call|teardown)\s+(\S+?)::")


def scope_of(nodeid: str) -> str:
    module = nodeid.split("::", 1)[0]
    return STACK if module in STACK_MODULES else module


def load_durations(path: Path = DURATIONS_FILE) -> dict[str, float]:
    """Seconds per module; empty (every scope reckoned by its test count) when there is none."""
    try:
        table = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return {str(k): float(v) for k, v in table.items()} if isinstance(table, dict) else {}


def longest_first(scopes: Mapping[str, Iterable[str]],
                  durations: Mapping[str, float]) -> list[str]:
    """The scopes (name -> node ids), longest first by the table; a scope with no module in the
    table at the table's mean seconds per test, so that an empty table orders by test count."""
    modules: dict[str, dict[str, int]] = {}
    for scope, nodeids in scopes.items():
        counts = modules.setdefault(scope, defaultdict(int))
        for nodeid in nodeids:
            counts[nodeid.split("::", 1)[0]] += 1
    known = [(durations[m], n) for counts in modules.values() for m, n in counts.items()
             if m in durations]
    per_test = sum(s for s, _ in known) / max(1, sum(n for _, n in known)) or 1.0

    def seconds(scope: str) -> float:
        return sum(durations.get(m, n * per_test) for m, n in modules[scope].items())

    return sorted(scopes, key=seconds, reverse=True)


def make_scheduler(config: Any, log: Any) -> Any:
    from xdist.scheduler import LoadScopeScheduling

    durations = load_durations()

    class LongestFirst(LoadScopeScheduling):  # type: ignore[misc]
        ordered = False

        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

        def _assign_work_unit(self, node: Any) -> None:
            # xdist fills its queue by test count and hands out the first scopes in the same
            # call; reordered here, before the first one leaves.
            if not self.ordered:
                self.workqueue = OrderedDict(
                    (scope, self.workqueue[scope])
                    for scope in longest_first(self.workqueue, durations))
                self.ordered = True
            super()._assign_work_unit(node)

    return LongestFirst(config, log)


def durations_from_report(text: str) -> dict[str, float]:
    """Seconds per module (set-up, call and teardown summed) from a ``--durations=0`` report,
    longest first."""
    seconds: dict[str, float] = defaultdict(float)
    for line in text.splitlines():
        if found := _DURATION.match(line):
            seconds[found.group(2)] += float(found.group(1))
    return {m: round(s, 1) for m, s in sorted(seconds.items(), key=lambda i: (-i[1], i[0]))}


def main(argv: list[str]) -> int:
    """Write ``tests/durations.json`` from a ``--durations=0`` report."""
    if len(argv) != 1:
        print("usage: python -m tests.scheduling DURATIONS_LOG", file=sys.stderr)
        return 2
    table = durations_from_report(Path(argv[0]).read_text())
    if not table:
        print(f"no durations in {argv[0]} (run pytest with --durations=0)", file=sys.stderr)
        return 1
    DURATIONS_FILE.write_text(json.dumps(table, indent=0) + "\n")
    print(f"{DURATIONS_FILE}: {len(table)} modules, {sum(table.values()):.0f} s in all")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
