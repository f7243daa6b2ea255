"""The seeded fault schedule of `tollgate chaos`: the same seed and count give the same plan.

Target faults are keyed on each event's action key, so which event meets which fault does not
depend on the order the workers happen to run things in; process faults (worker SIGKILL) fall
after a planned number of submissions.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass, field, replace
from typing import Literal

TargetFault = Literal[
    "none", "unavailable", "rate_limit", "delay", "fail_after_write", "bad_gateway_after_write",
    "drop_after_write", "slow_lookup_after_write", "timeout_after_write", "timeout_late_write",
]
#: How long a timeout fault holds the answer: past the messaging adapter's 10 s client timeout.
TIMEOUT_FAULT_MS = 11_000
Delivery = Literal["once", "duplicate", "out_of_order"]
Review = Literal["approve", "reject", "race"]
Restart = Literal["postgres", "temporal"]

#: (fault, weight): half the events meet no fault at the target.
_TARGET_FAULTS: tuple[tuple[TargetFault, int], ...] = (
    ("none", 10), ("unavailable", 2), ("rate_limit", 1), ("delay", 2), ("fail_after_write", 2),
    ("bad_gateway_after_write", 1), ("drop_after_write", 1), ("slow_lookup_after_write", 1),
)
_DELIVERIES: tuple[tuple[Delivery, int], ...] = (("once", 7), ("duplicate", 2),
                                                   ("out_of_order", 1))
_REVIEWS: tuple[tuple[Review, int], ...] = (("approve", 7), ("reject", 1), ("race", 2))


@dataclass(frozen=True)
class EventPlan:
    index: int
    key: str
    customer: str
    #: Synthetic personal data: found in a log, it proves a leak (no real word contains it).
    first_name: str
    pet_name: str
    fault: TargetFault
    fault_times: int
    fault_ms: int
    delivery: Delivery
    review: Review


@dataclass(frozen=True)
class Plan:
    seed: int
    events: list[EventPlan]
    #: Worker SIGKILLs: after this many submissions, kill, wait ``pause_ms``, start again.
    kills: list[tuple[int, int]]
    #: Server restarts: after this many submissions, restart PostgreSQL (fast mode: every
    #: connection cut) or the Temporal dev server (same SQLite file) under the running worker.
    restarts: list[tuple[int, Restart]] = field(default_factory=list)


def _pick(rng: random.Random, table: tuple[tuple[str, int], ...]) -> str:
    return rng.choices([name for name, _ in table], [weight for _, weight in table])[0]


def _marker(rng: random.Random) -> str:
    return "Qx" + "".join(rng.choices(string.ascii_lowercase, k=8))


def make_plan(seed: int, events: int, *, run_tag: str, kills: int | None = None,
              restarts: int | None = None) -> Plan:
    """``run_tag`` keeps keys unique across runs on one server; it takes no part in the
    randomness, so the same seed gives the same faults. ``kills``: worker SIGKILLs (default
    one per 25 events, at least one). ``restarts``: restarts of each server, PostgreSQL and
    Temporal (default one of each per 50 events from 25 events on, none below)."""
    rng = random.Random(seed)
    plans = []
    for i in range(events):
        fault: TargetFault = _pick(rng, _TARGET_FAULTS)  # type: ignore[assignment]
        plans.append(EventPlan(
            index=i, key=f"chaos-{run_tag}-{seed}-{i}", customer=f"CH-{run_tag}-{i}",
            first_name=_marker(rng), pet_name=_marker(rng), fault=fault,
            fault_times=rng.randint(1, 2) if fault in ("unavailable", "rate_limit") else 1,
            fault_ms=rng.randint(200, 1500),
            delivery=_pick(rng, _DELIVERIES),  # type: ignore[arg-type]
            review=_pick(rng, _REVIEWS),  # type: ignore[arg-type]
        ))
    kill_count = (max(1, events // 25) if events >= 4 else 0) if kills is None else kills
    kill_points = sorted((rng.randint(1, max(1, events - 1)), rng.randint(100, 1500))
                   for _ in range(kill_count))
    # Drawn after everything above, so a seed's events and kills are what they were before
    # server restarts existed.
    each = (max(1, events // 50) if events >= 25 else 0) if restarts is None else restarts
    restart_points: list[tuple[int, Restart]] = sorted(
        (rng.randint(1, max(1, events - 1)), server)
        for server in ("postgres", "temporal") for _ in range(each))
    # Target timeouts, from a stream of their own so that asking for more or fewer restarts
    # leaves them be, and added after the rest so a seed's other faults are what they were
    # before timeouts existed: one event in five that met no fault times out instead, half
    # with the write stored before the silence, half with the write landing only after the
    # client gave up.
    timeouts = random.Random(f"timeouts-{seed}")
    for i, plan in enumerate(plans):
        roll = timeouts.random()
        if plan.fault == "none" and roll < 0.2:
            plans[i] = replace(plan, fault="timeout_after_write" if roll < 0.1
                               else "timeout_late_write", fault_ms=TIMEOUT_FAULT_MS)
    return Plan(seed=seed, events=plans, kills=kill_points, restarts=restart_points)
