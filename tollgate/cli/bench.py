"""`tollgate bench` and `tollgate items bench`: the command lines of ``tollgate.bench``
(docs/performance.md), registered only where that package is (ADR 0023)."""

from __future__ import annotations

import argparse
from typing import Any

import click

from tollgate.bench.variant import VARIANTS
from tollgate.cli.params import EdgePath


@click.command(context_settings={"show_default": True})
@click.option("--events", type=int, default=500, help="events per pipeline per phase")
@click.option("--baseline", type=click.Choice(["same-shape", "naive", "both"]), default="both",
              help="what Tollgate is compared with (docs/performance.md)")
@click.option("--variant", "variants", multiple=True, type=click.Choice(list(VARIANTS)),
              help="also run the same-shape skeleton with one of Tollgate's differences "
                   "(repeatable; tollgate/bench/variant.py): what each costs the server")
@click.option("--concurrency", type=int, default=50, help="events in flight (submit -> end)")
@click.option("--rounds", type=int, default=4, help="rounds per pipeline (A B C, C B A ...)")
@click.option("--warmup", type=int, default=30, help="unmeasured events per pipeline")
@click.option("--model-latency", type=float, default=0.0, metavar="S",
              help="add a phase where drafting takes S seconds")
@click.option("--duplicates", type=float, default=0.0, metavar="FRACTION",
              help="add a phase where this share of submissions are re-sent copies")
@click.option("--parked", type=int, default=0, metavar="N",
              help="add a phase with N Tollgate events held waiting for review")
@click.option("--plain-again/--no-plain-again", default=True,
              help="with --duplicates or --parked, run the plain phase again after the "
                   "duplicates and model-latency phases (before parked) and judge those goals "
                   "against the mean of both plain phases; --no-plain-again saves one phase")
@click.option("--workers", type=int, default=1, metavar="N",
              help="Tollgate worker processes (main and draft worker each)")
@click.option("--rate", "rates", multiple=True, metavar="TARGET=N",
              help="limit a target's actions to N/s across Tollgate's workers "
                   "(TOLLGATE_TARGET_RATES; repeatable; none: no limit)")
@click.option("--review-poll", type=float, default=0.1, metavar="S",
              help="how often the scripted reviewer lists waiting records")
@click.option("--event-timeout", type=float, default=120.0, metavar="S",
              help="how long one event may take before it counts as an error")
@click.option("--replay", is_flag=True,
              help="then replay the committed histories and up to 1,000 of the run's")
@click.option("--pg-stats", is_flag=True,
              help="preload pg_stat_statements on the bench's PostgreSQL and report the top "
                   "statements and wait events per phase")
@click.option("--py-spy", "py_spy", metavar="DIR", type=EdgePath(file_okay=False),
              help="record the Tollgate worker with py-spy over each phase's measured rounds "
                   "into DIR and report the share of its Python CPU per mechanism")
@click.option("--json", "json_path", metavar="PATH", type=EdgePath(dir_okay=False),
              help="also write every figure here")
@click.option("--state-dir", default=".tollgate", type=EdgePath(file_okay=False),
              help="parent of bench-<stamp>/")
@click.option("--keep", is_flag=True, help="keep bench-<stamp>/ (logs, databases)")
@click.option("--seed", type=int, default=6, help="where the duplicate copies fall")
def bench(**options: Any) -> int:
    """Benchmark the full pipeline against bare Temporal workflows of its shape (same-shape,
    naive or both), on a dev stack of its own (minutes; docs/performance.md). Exit 1 when a
    verdict fails."""
    from tollgate.bench.command import check_args, run_bench

    args = argparse.Namespace(**options)
    problem = check_args(args)
    if problem:
        raise click.UsageError(problem)
    return run_bench(args)


@click.command("bench")
@click.option("--items", "count", type=click.IntRange(min=1), default=50,
              help="how many saves to time")
@click.option("--model-delay", type=click.FloatRange(min=0), default=5.0,
              help="seconds the stand-in model takes per answer")
def bench_saves(count: int, model_delay: float) -> int:
    """Time saves while the model takes --model-delay seconds (the save must not wait)."""
    import logging

    from tollgate.bench.save import run_bench_save
    from tollgate.observability.logs import configure_logging

    configure_logging(logging.WARNING)
    return run_bench_save(count, model_delay)
