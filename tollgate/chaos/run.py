"""`tollgate chaos`: M events on a real stack of its own while a seeded schedule injects faults,
then the invariants (docs/reliability.md).

The stack is the one `tollgate dev` runs (Temporal dev server, embedded PostgreSQL, stand-ins)
with the worker in a child process, so it can be SIGKILLed and started again mid-run. This
module starts the stack, hands the plan to ``ChaosRun`` (``driver.py``, which drives the events
and the disruptions), checks the invariants (``checks.py``) and makes the report.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from contracts import EventState, FinalOutcome
from policies.keys import action_key
from tollgate.chaos.checks import check_invariants, summary
from tollgate.chaos.driver import TENANT, ChaosRun
from tollgate.chaos.oncall import letters_tag
from tollgate.chaos.schedule import make_plan
from tollgate.chaos.stack import LOOKUP_WINDOW_S, start_stack
from tollgate.config.settings import Settings, default_process_variable
from tollgate.dev.endpoints import stack_env
from tollgate.runtime.client import build_client


def _sent(outcome: object) -> bool:
    return isinstance(outcome, FinalOutcome) and outcome.state == EventState.SUCCEEDED


async def chaos(seed: int, events: int, state_dir: Path,
                kills: int | None = None, restarts: int | None = None,
                inspect: Callable[[str], Awaitable[None]] | None = None, *,
                lookup_window_s: int = LOOKUP_WINDOW_S) -> dict[str, Any]:
    """``inspect`` is given the run's database URL before the stack goes (the chaos test drafts
    an incident summary over the run there). ``lookup_window_s``: the window the stand-in
    target declares, so the longest a write that never landed keeps its event open."""
    started = time.monotonic()
    stack = await start_stack(state_dir, lookup_window_s=lookup_window_s)
    try:
        assert stack.standins is not None
        stack.standins.messaging.dedupe = False
        settings = Settings.from_env(stack_env(stack))
        client = await build_client(settings.temporal_address, settings.namespace,
                                    env=settings.env)
        plan = make_plan(seed, events, run_tag=letters_tag(datetime.now(UTC)),
                         kills=kills, restarts=restarts)
        run = ChaosRun(plan, stack, client, settings, lookup_window_s=lookup_window_s)
        await run.run()
        assert stack.database_url is not None
        logs = await asyncio.to_thread(lambda: sorted(state_dir.glob("worker-*.log")))
        found = await check_invariants(plan, run.outcomes, stack.standins, stack.database_url,
                                       logs)
        # A planned fault waits for its event's send; an event a racing reviewer rejected never
        # sends, so its fault rightly stays armed and is not counted as missed.
        sent = {action_key(TENANT, f"evt-{e.key}", "messaging", "send_message")
                for e in plan.events if _sent(run.outcomes.get(run.main_runs.get(e.index, "")))}
        faults = [f for f in stack.standins.messaging.faults.pending() if f.get("key") in sent]
        if inspect is not None:
            await inspect(stack.database_url)
    finally:
        await asyncio.to_thread(stack.stop)
    states: dict[str, int] = {}
    for out in run.outcomes.values():
        name = out if isinstance(out, str) else out.state.value
        states[name] = states.get(name, 0) + 1
    return {
        "seed": seed, "events": events, "workflows": len(run.outcomes),
        "seconds": round(time.monotonic() - started, 1), "lookup_window_s": lookup_window_s,
        "worker_kills": run.kills_done, "server_restarts": run.restarts_done,
        "switches_reopened": run.reopened,
        "target_faults": {k: sum(1 for e in plan.events if e.fault == k)
                          for k in sorted({e.fault for e in plan.events})},
        "deliveries": {k: sum(1 for e in plan.events if e.delivery == k)
                       for k in ("once", "duplicate", "out_of_order")},
        "reviews": {k: sum(1 for e in plan.events if e.review == k)
                    for k in ("approve", "reject", "race")},
        "faults_not_fired": len(faults), "terminal_states": states,
        "invariants": summary(found), "ok": not any(found.values()),
    }


async def run_chaos(seed: int, events: int, state_dir: Path, *, kills: int | None = None,
                    restarts: int | None = None, keep: bool = False,
                    lookup_window_s: int = LOOKUP_WINDOW_S) -> dict[str, Any]:
    import shutil

    runtime = state_dir.parent / "run"
    runtime.mkdir(mode=0o700, parents=True, exist_ok=True)
    default_process_variable("XDG_RUNTIME_DIR", str(runtime))
    shutil.rmtree(state_dir, ignore_errors=True)
    report = await chaos(seed, events, state_dir, kills, restarts,
                         lookup_window_s=lookup_window_s)
    # A failed run's folder is its evidence (worker log, Temporal's SQLite file with every
    # history, the database): kept, and named in the report.
    if report["ok"] and not keep:
        with contextlib.suppress(OSError):
            shutil.rmtree(state_dir, ignore_errors=True)
    else:
        report["kept"] = str(state_dir)
    return report
