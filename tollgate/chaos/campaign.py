"""A chaos campaign: many seeds one after another, each on a fresh stack, and one summary.

The long form of the issue's chaos run (docs/reliability.md). A seed whose run breaks an
invariant, or cannot run at all, is named in the summary with what it found; the others are
counted. ``budget_s`` stops launching new seeds once spent, so a campaign can be cut to the time
there is and still say exactly what it covered.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from tollgate.chaos.run import run_chaos
from tollgate.chaos.stack import LOOKUP_WINDOW_S


def parse_seeds(text: str) -> list[int]:
    """``1-200``, ``3,7,11`` or a mix (``1-5,9``): the seeds in order, each once.

    Raises:
        ValueError: a part is not a number or an ascending range of numbers.
    """
    seeds: list[int] = []
    for part in (p.strip() for p in text.split(",")):
        first, dash, last = part.partition("-")
        if not first.isdigit() or (dash and not last.isdigit()):
            raise ValueError(f"{part!r} is not a seed or a range like 1-200")
        low, high = int(first), int(last) if dash else int(first)
        if high < low:
            raise ValueError(f"{part!r} runs backwards")
        seeds.extend(s for s in range(low, high + 1) if s not in seeds)
    return seeds


async def campaign(seeds: Iterable[int], events: int, parent: Path, *,
                   kills: int | None = None, restarts: int | None = None,
                   budget_s: float | None = None, out: Path | None = None,
                   echo: Callable[[str], None] = print,
                   clock: Callable[[], float] = time.monotonic,
                   lookup_window_s: int = LOOKUP_WINDOW_S) -> dict[str, Any]:
    started = clock()
    planned = list(seeds)
    reports: list[dict[str, Any]] = []
    for seed in planned:
        if budget_s is not None and clock() - started >= budget_s:
            break
        try:
            report = await run_chaos(seed, events, parent / f"chaos-{seed}", kills=kills,
                                     restarts=restarts, lookup_window_s=lookup_window_s)
        except Exception as exc:  # the stack did not come up: a failed seed, not a lost one
            report = {"seed": seed, "events": events, "ok": False,
                      "invariants": {"run": [f"did not run: {type(exc).__name__}: {exc}"]}}
        reports.append(report)
        if out is not None:
            await asyncio.to_thread(_save, out / f"seed-{seed}.json", report)
        echo(f"seed {seed}: {'held' if report['ok'] else 'FAILED'}  "
             f"{report.get('workflows', 0)} workflows  {report.get('seconds', 0)} s")
    return summarise(planned, reports, clock() - started)


def summarise(planned: list[int], reports: list[dict[str, Any]],
              seconds: float) -> dict[str, Any]:
    """One summary of many seed reports; a failed seed is named with what did not hold."""
    failed = {r["seed"]: {k: v for k, v in r["invariants"].items() if v != "held"}
              for r in reports if not r["ok"]}
    ran = {r["seed"] for r in reports}
    states: Counter[str] = Counter()
    faults: Counter[str] = Counter()
    restarts: Counter[str] = Counter()
    for r in reports:
        states.update(r.get("terminal_states", {}))
        faults.update(r.get("target_faults", {}))
        restarts.update(r.get("server_restarts", []))
    return {
        "seeds_planned": len(planned), "seeds_run": len(reports),
        "seeds_not_run": [s for s in planned if s not in ran][:20],
        "events": sum(r.get("events", 0) for r in reports if "workflows" in r),
        "workflows": sum(r.get("workflows", 0) for r in reports),
        "worker_kills": sum(r.get("worker_kills", 0) for r in reports),
        "server_restarts": dict(restarts),
        "switches_reopened": sum(r.get("switches_reopened", 0) for r in reports),
        "target_faults": dict(faults), "terminal_states": dict(states),
        "faults_not_fired": sum(r.get("faults_not_fired", 0) for r in reports),
        "seconds": round(seconds, 1),
        "failed_seeds": failed, "ok": not failed and bool(reports),
    }


def _save(path: Path, report: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2))
