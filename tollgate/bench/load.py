"""The machine's load during a bench run: read at the start and end of the run and of each
phase, and said in words beside the figures (a loaded machine moves events/s and latency far
more than CPU per event)."""

from __future__ import annotations

import os
from typing import Any

#: A 1-minute load average under this (whole machine) counts as quiet, as issue 33 put it.
QUIET_LOAD = 1.0


def machine_load() -> dict[str, float | int | None]:
    """The 1-, 5- and 15-minute load averages now, and the CPU count they are relative to."""
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:
        return {"load_1m": None, "load_5m": None, "load_15m": None, "cpus": os.cpu_count()}
    return {"load_1m": round(one, 2), "load_5m": round(five, 2), "load_15m": round(fifteen, 2),
            "cpus": os.cpu_count()}


def load_words(load: dict[str, Any] | None) -> str:
    """'load 0.4 -> 2.1 (1 min) on 2 CPUs: loaded' from ``{"start": ..., "end": ...}``."""
    if not load or not load.get("start") or not load.get("end"):
        return "load not recorded"
    start, end = load["start"]["load_1m"], load["end"]["load_1m"]
    if start is None or end is None:
        return "load not readable here"
    kind = "quiet" if max(start, end) < QUIET_LOAD else "loaded"
    return f"load {start:g} -> {end:g} (1 min) on {load['end']['cpus']} CPUs: {kind}"
