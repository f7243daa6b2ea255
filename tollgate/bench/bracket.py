"""The plain phases a scenario's throughput is judged against, and the order the phases run in.

Issue 33's duplicates and parked goals compare a phase's events/s with the plain phase's. The
plain phase runs first, on a fresh server and database, and the machine's load drifts (other
work shares its cores), so whatever changes between the two phases lands on the comparison: one
run met the duplicates goal (-7 %) and the next identical run missed it (23 %), while the
same-shape skeleton itself lost 28 % in that phase. So when a compared phase runs, the bench
runs the plain phase again (``plain_again``) after the duplicates and model-latency phases, and
judges against the mean of the plain phases, printing both so a reader sees the drift.

The repeat runs before the parked phase, not after it. The parked phase leaves its runs open
until the stack stops, so a plain phase after it would run beside them; ending them first would
mean terminating thousands of runs (a burst of server work just before the measured rounds) and
would still leave their histories in the server's SQLite, which the first plain phase never
had: the two plain phases would no longer measure the same server, and the mean would carry part
of what parking costs. So duplicates is bracketed (plain, duplicates, [model latency],
plain_again) and parked is compared with the mean of the two plain phases before it, the second
right before it: not a bracket, but the fresh server's warming up, which weighed on the first
plain phase alone, counts half.

``--no-plain-again`` skips the repeat (one phase's time, minutes with 500 events); a report
without ``plain_again`` (older JSON too) is judged against the first plain phase, as before.
"""

from __future__ import annotations

from typing import Any

from tollgate.bench.tally import Phase

PLAIN, PLAIN_AGAIN = "plain", "plain_again"


def phase_order(duplicates: float, model_latency: float, parked: int,
                again: bool = True) -> list[Phase]:
    """The phases a run asks for, in run order; ``plain_again`` only when a phase whose goal
    compares with plain runs (duplicates, parked): the model-latency phase is judged on its
    acknowledgement latency, which the model's seconds dwarf any drift of."""
    phases = [Phase(PLAIN)]
    if duplicates:
        phases.append(Phase("duplicates", duplicates=duplicates))
    if model_latency:
        phases.append(Phase("model_latency", model_latency=model_latency))
    if again and (duplicates or parked):
        phases.append(Phase(PLAIN_AGAIN))
    if parked:  # last: the parked runs stay open until the stack stops
        phases.append(Phase("parked", parked=parked))
    return phases


def plains(phases: dict[str, Any], pipeline: str) -> tuple[float, ...]:
    """The pipeline's events/s in each plain phase of the report that has one, in run order."""
    found = (((phases.get(name) or {}).get(pipeline) or {}).get("events_per_s")
             for name in (PLAIN, PLAIN_AGAIN))
    return tuple(f for f in found if f)


def reference(figures: tuple[float, ...]) -> float | None:
    """What a scenario phase is compared with: the mean of the plain figures (None: none)."""
    return sum(figures) / len(figures) if figures else None


def drift(figures: tuple[float, ...]) -> float | None:
    """How much the repeated plain phase differs from the first, as a fraction of the first
    (-0.11: 11 % slower the second time); None without a repeat."""
    return figures[1] / figures[0] - 1 if len(figures) == 2 else None
