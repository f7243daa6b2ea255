"""How far one run's ratios can be trusted: Tollgate's rounds against each baseline's, pair by pair.

A phase's ratio (Tollgate's CPU per event over a baseline's, or its events/s over the
baseline's) is one figure from the phase's rounds taken as a whole, and two runs of the same
commit on 2 shared cores differ by about 0.2 in it. The rounds run A B, B A, ... so round r of
Tollgate and round r of a baseline ran next to each other (with two baselines, within one pass
A B C or C B A) under the same load; the ratio of each such pair, and the range over the pairs,
says how much the machine moved the figure within this one run. A goal whose limit lies inside
that range is not settled by the run.

Only rounds that carry their own CPU (``cpu_ms_per_event``, recorded since this module) are
paired, so an older report reads exactly as it did.
"""

from __future__ import annotations

from typing import Any

from tollgate.bench.stats import ratio

CPU, THROUGHPUT = "all CPU ms/event", "events/s"


def all_cpu_ms(summary: dict[str, Any] | None) -> float | None:
    """CPU ms per event over every process the bench measures (server, worker, PostgreSQL,
    bench and stand-ins), of a phase's summary or of one of its rounds."""
    per = (summary or {}).get("cpu_ms_per_event") or {}
    return round(sum(per.values()), 1) if per else None


def round_figures(events: int, wall_s: float, cpu_ms: dict[str, float]) -> dict[str, Any]:
    """One measured round as the JSON keeps it: CPU per process and per event beside its events
    and wall time (no CPU per event for a round where no event finished)."""
    return {"events": events, "wall_s": round(wall_s, 2),
            "events_per_s": round(events / wall_s, 2) if wall_s else None,
            "cpu_ms": {k: round(v, 1) for k, v in sorted(cpu_ms.items())},
            "cpu_ms_per_event": {k: round(v / events, 1) for k, v in sorted(cpu_ms.items())}
            if events else None}


def pair_ratios(phase: dict[str, Any], baseline: str) -> dict[str, list[float]]:
    """Tollgate / ``baseline`` for each pair of neighbouring rounds, CPU per event and events/s,
    in round order; a pair where either round lacks a figure is left out."""
    toll = (phase.get("tollgate") or {}).get("rounds") or []
    base = (phase.get(baseline) or {}).get("rounds") or []
    found: dict[str, list[float]] = {CPU: [], THROUGHPUT: []}
    for t, b in zip(toll, base, strict=False):
        if "cpu_ms_per_event" not in t or "cpu_ms_per_event" not in b:
            continue  # an older report: its rounds carry no CPU
        for key, q in ((CPU, ratio(all_cpu_ms(t), all_cpu_ms(b))),
                       (THROUGHPUT, ratio(t.get("events_per_s"), b.get("events_per_s")))):
            if q is not None:
                found[key].append(q)
    return found


def span(ratios: list[float]) -> tuple[float, float] | None:
    """The lowest and highest of the pairs' ratios; None under two pairs (one pair is the
    phase figure itself, and says nothing of the spread)."""
    return (min(ratios), max(ratios)) if len(ratios) >= 2 else None


def span_words(found: tuple[float, float] | None) -> str:
    """' (rounds 1.21-1.45)' (an en dash between), or nothing without a range."""
    return "" if found is None else f" (rounds {found[0]:.2f}\u2013{found[1]:.2f})"
