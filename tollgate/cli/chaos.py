"""`tollgate chaos`: the seeded fault run (docs/reliability.md)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from tollgate.cli.common import Command
from tollgate.cli.params import EdgePath
from tollgate.runtime.exits import Exit

if TYPE_CHECKING:
    from tollgate.config.settings import Settings


@click.command(context_settings={"show_default": True})
@click.option("--seed", type=int, default=1, help="the schedule's seed (same seed, same faults)")
@click.option("--events", type=click.IntRange(1, 100_000), default=20, help="events to run")
@click.option("--kills", type=click.IntRange(min=0), metavar="N",
              help="worker SIGKILLs [default: one per 25 events, at least one]")
@click.option("--restarts", type=click.IntRange(min=0), metavar="N",
              help="restarts of PostgreSQL and of the Temporal dev server, N each "
                   "[default: one each per 50 events from 25 events on]")
@click.option("--state-dir", type=EdgePath(file_okay=False, path_type=Path),
              default=Path(".tollgate"), help="parent of chaos-<seed>/")
@click.option("--keep", is_flag=True, help="keep chaos-<seed>/ (worker logs, databases) when "
              "every invariant held too (a failed run's folder is always kept)")
@click.option("--json", "json_path", type=EdgePath(dir_okay=False, path_type=Path),
              help="also write the report here")
@click.option("--seeds", "seed_list", metavar="LIST",
              help="a campaign: these seeds one after another (1-200, 3,7,11), each on a fresh "
                   "stack, then one summary; --seed is ignored")
@click.option("--budget", type=click.FloatRange(min=0, min_open=True), metavar="MINUTES",
              help="a campaign launches no new seed after this long (the summary says which "
                   "seeds did not run)")
@click.option("--out", type=EdgePath(file_okay=False, path_type=Path),
              help="a campaign writes each seed's report here as seed-N.json")
@click.option("--lookup-window", "lookup_window", type=click.IntRange(3, 86_400), default=30,
              metavar="SECONDS", help="the lookup window the stand-in target declares: how long "
              "the reconciler looks for an unknown write before it stops the event; at least "
              "3 s, since its slowest lookup fault hides a write for 1.5 s")
def chaos(seed: int, events: int, kills: int | None, restarts: int | None, state_dir: Path,
          keep: bool, json_path: Path | None, seed_list: str | None, budget: float | None,
          out: Path | None, lookup_window: int) -> Command:
    """Run EVENTS events on a stack of its own while a seeded schedule injects faults (target
    5xx, 429, delays, 504/502/drop after the write, slow lookups, duplicate and out-of-order
    deliveries, racing reviewers, worker SIGKILL, PostgreSQL and Temporal restarts), then check
    the invariants. Exit 1 when one does not hold. An unknown write that never landed waits the
    stand-in's declared lookup window (a 503 from a target that does not dedupe, a kill
    between fence and POST)."""
    if seed_list is not None:
        return _campaign(seed_list, events, kills, restarts, state_dir, json_path, budget, out,
                         lookup_window)
    folder = state_dir.resolve() / f"chaos-{seed}"

    async def go(s: Settings) -> int:
        from tollgate.chaos.run import run_chaos
        from tollgate.observability.logs import configure_logging

        configure_logging()
        report = await run_chaos(seed, events, folder, kills=kills, restarts=restarts,
                                 keep=keep, lookup_window_s=lookup_window)
        return await _report(report, json_path)

    return go


def _campaign(seed_list: str, events: int, kills: int | None, restarts: int | None,
              state_dir: Path, json_path: Path | None, budget: float | None,
              out: Path | None, lookup_window: int) -> Command:
    from tollgate.chaos.campaign import parse_seeds

    try:
        seeds = parse_seeds(seed_list)
    except ValueError as exc:
        raise click.UsageError(f"--seeds: {exc}") from None

    parent = state_dir.resolve()

    async def go(s: Settings) -> int:
        from tollgate.chaos.campaign import campaign
        from tollgate.observability.logs import configure_logging

        configure_logging()
        # A folder that cannot be made fails the campaign once, in one line (exit 5), rather
        # than every seed in turn.
        for folder in (parent, out):
            if folder is not None:
                await asyncio.to_thread(folder.mkdir, parents=True, exist_ok=True)
        summary = await campaign(seeds, events, parent, kills=kills,
                                 restarts=restarts, out=out,
                                 budget_s=budget * 60 if budget else None,
                                 echo=lambda line: click.echo(line, err=True),
                                 lookup_window_s=lookup_window)
        return await _report(summary, json_path)

    return go


async def _report(report: dict[str, Any], json_path: Path | None) -> int:
    """Print a run's report or a campaign's summary, save it with --json; exit 1 unless ok."""
    text = json.dumps(report, indent=2)
    click.echo(text)
    if json_path:
        await asyncio.to_thread(json_path.write_text, text)
    return Exit.OK if report["ok"] else Exit.REFUSED
