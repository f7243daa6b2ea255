"""For the bench's goal tests: a report and a goal looked up by name."""

from __future__ import annotations

from typing import Any

from tollgate.bench.goals import evaluate


def report(toll_eps: float = 15.0, toll_cpu: float = 100.0, ack: tuple[float, float] = (300, 900),
           upserts: int = 2, events: int = 40, **extra: Any) -> dict[str, Any]:
    plain = {
        "settings": {"duplicates": 0, "model_latency_s": 0, "parked": 0},
        "same-shape": pipeline(15.0, {"server": 60, "worker": 50, "postgres": 0, "driver": 5},
                               (250, 800)),
        "naive": pipeline(10.0, {"server": 100, "worker": 60, "postgres": 0, "driver": 5},
                          (300, 1000)),
        "tollgate": pipeline(toll_eps, {"server": toll_cpu / 2, "worker": toll_cpu / 2},
                             ack),
    }
    return {"phases": {"plain": plain, **extra.pop("phases", {})},
            "history_shape": {"tollgate": {"history_events": events,
                                           "search_attribute_upserts": upserts}},
            "environment": {"commit": "abc1234"}, "started_at": "2026-12-02T03:00:00",
            "load": {"start": {"load_1m": 0.4, "cpus": 2}, "end": {"load_1m": 2.5, "cpus": 2}},
            **extra}


def by_name(found: dict[str, Any]) -> dict[str, Any]:
    return {g.name: g for g in evaluate(found)}


def pipeline(events_per_s: float, cpu: dict[str, float], ack: tuple[float, float],
             rss: float = 120.0) -> dict[str, Any]:
    return {"events_per_s": events_per_s, "cpu_ms_per_event": cpu,
            "ack": {"p50_ms": ack[0], "p99_ms": ack[1]}, "worker_peak_rss_mb": rss}
