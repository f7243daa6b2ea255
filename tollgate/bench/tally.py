"""What the bench counts for one pipeline in one phase, and the order events are sent in."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tollgate.bench.spread import round_figures
from tollgate.bench.stats import summary_ms


@dataclass(frozen=True)
class Phase:
    name: str
    duplicates: float = 0.0
    model_latency: float = 0.0
    parked: int = 0  # Tollgate events held waiting for review while the rounds run


def plan(submissions: int, duplicates: float, spread: int, rng: random.Random) -> list[int]:
    """Submission order as indexes of distinct events: ``round(submissions * duplicates)`` of
    them are copies of an earlier one, each at most ``spread`` places after its original (so
    some arrive while it runs and some after it ended)."""
    copies = round(submissions * duplicates)
    distinct = submissions - copies
    if distinct < 1:
        raise ValueError("at least one distinct event is needed")
    order = list(range(distinct))
    for _ in range(copies):
        original = rng.randrange(distinct)
        at = order.index(original) + rng.randint(1, max(1, spread))
        order.insert(min(at, len(order)), original)
    return order


@dataclass
class Tally:
    """Everything measured for one pipeline in one phase (warm-up excluded)."""

    events: int = 0  # distinct events accepted and finished
    submissions: int = 0
    wall_s: float = 0.0
    ack: list[float] = field(default_factory=list)
    duplicate_ack: list[float] = field(default_factory=list)
    e2e: list[float] = field(default_factory=list)
    cpu_ms: Counter[str] = field(default_factory=Counter)
    round_trips: Counter[str] = field(default_factory=Counter)
    outcomes: Counter[str] = field(default_factory=Counter)
    reviewer: Counter[str] = field(default_factory=Counter)
    rounds: list[dict[str, Any]] = field(default_factory=list)
    rss_mb_at: dict[int, float] = field(default_factory=dict)
    peak_rss_mb: float = 0.0
    messages: int = 0
    distinct: int = 0
    samples: list[str] = field(default_factory=list)
    slowest: tuple[float, str] | None = None  # (end-to-end seconds, workflow id)
    slowest_history: dict[str, Any] | None = None  # what ``slowest.py`` read of it
    #: Events whose run's close the result's long poll missed (ADR 0083): learned and closed,
    #: each in ms after the event was sent.
    missed_closes: list[dict[str, Any]] = field(default_factory=list)

    def finished(self, workflow_id: str, e2e_s: float) -> None:
        """One event's end to end, kept with the slowest event's id."""
        self.e2e.append(e2e_s)
        if self.slowest is None or e2e_s > self.slowest[0]:
            self.slowest = (e2e_s, workflow_id)

    def missed_close(self, workflow_id: str, learned_s: float, closed_s: float) -> None:
        """An event whose close the result's poll missed: when the bench learned of it (its
        end to end, as ``finished`` counted it) and when the run closed (``describe()``)."""
        self.missed_closes.append({"workflow_id": workflow_id,
                                   "learned_ms": round(learned_s * 1000, 1),
                                   "closed_ms": round(closed_s * 1000, 1)})

    def add_round(self, events: int, wall_s: float, cpu_ms: dict[str, float], *,
                  missed_closes: int = 0) -> None:
        """One measured round: its CPU and wall time count towards the phase's figures (the
        phase's CPU per event is the sum over its rounds), and it is kept as a round of its
        own for the pairs in ``spread.py``, with its missed closes when it had any (its wall
        time then holds up to ``CHECK_EVERY_S`` of waiting for each)."""
        self.cpu_ms.update(cpu_ms)
        self.wall_s += wall_s
        figures = round_figures(events, wall_s, cpu_ms)
        if missed_closes:
            figures["missed_closes"] = missed_closes
        self.rounds.append(figures)

    def summary(self) -> dict[str, Any]:
        n = max(self.events, 1)
        kinds: Counter[str] = Counter()
        steps: Counter[str] = Counter()
        for key, count in self.round_trips.items():
            step, _, kind = key.rpartition("/")
            kinds[kind] += count
            steps[step] += count
        trips = {k: round(v / n, 2) for k, v in sorted(kinds.items())}
        return {
            "events": self.events, "distinct_events": self.distinct,
            "submissions": self.submissions, "wall_s": round(self.wall_s, 2),
            "events_per_s": round(self.events / self.wall_s, 2) if self.wall_s else None,
            "submissions_per_s": round(self.submissions / self.wall_s, 2) if self.wall_s else None,
            "ack": summary_ms(self.ack), "duplicate_ack": summary_ms(self.duplicate_ack),
            "e2e": summary_ms(self.e2e),
            "cpu_ms_per_event": {k: round(v / n, 1) for k, v in sorted(self.cpu_ms.items())},
            "pg_round_trips_per_event": {**trips, "total": round(sum(trips.values()), 2)},
            "pg_round_trips_per_event_by_step": {k: round(v / n, 2)
                                                 for k, v in sorted(steps.items())},
            "worker_peak_rss_mb": round(self.peak_rss_mb, 1),
            "worker_rss_mb_at": self.rss_mb_at, "outcomes": dict(self.outcomes),
            "reviewer": dict(self.reviewer), "messages_at_target": self.messages,
            "rounds": self.rounds, "sample_workflow_ids": self.samples,
            "slowest_event": self.slowest_history, "missed_closes": self.missed_closes,
        }


def split(total: int, parts: int) -> list[int]:
    """``total`` events over ``parts`` rounds, as even as can be."""
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


def send_rate(messages: list[dict[str, Any]], since: datetime) -> dict[str, float]:
    """What the messaging target saw after ``since`` (measured rounds only): the most sends in
    any one second, and the mean per second from its first send to its last."""
    at = sorted(t for m in messages if (t := datetime.fromisoformat(m["created_at"])) >= since)
    if len(at) < 2:
        return {"sends": len(at), "peak_in_1s": len(at), "mean_per_s": 0.0}
    peak, j = 0, 0
    for i, t in enumerate(at):
        while (t - at[j]).total_seconds() >= 1.0:
            j += 1
        peak = max(peak, i - j + 1)
    span = (at[-1] - at[0]).total_seconds()
    return {"sends": len(at), "peak_in_1s": peak,
            "mean_per_s": round((len(at) - 1) / span, 2) if span else float(len(at))}
