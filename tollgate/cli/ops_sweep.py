"""`tollgate ops sweep`: the receipt sweep run now (or its schedule installed), its report as
text, and how many open receipts it left alone as too recent: the sweep looks up only receipts
unchanged for 15 minutes, so its "0 still open" a minute after a send went unknown must not read
as "no write is unknown" (``ops status`` counts those under unknown writes open)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from tollgate.cli.common import Command, connect, json_option, pool
from tollgate.runtime.exits import Exit, Failure

if TYPE_CHECKING:
    from contracts.sweep import SweepReport, SweptEnd
    from tollgate.config.settings import Settings


@click.command()
@click.option("--install", is_flag=True,
              help="create the Temporal Schedule (every 5 min) if it is missing, and run nothing")
@json_option
def sweep(install: bool, as_json: bool) -> Command:
    """Compare the receipts with the targets now (exit 1 when a target misses a write)."""

    async def go(s: Settings) -> int:
        from temporalio.common import WorkflowIDConflictPolicy

        from contracts.sweep import SweepReport, SweepRequest
        from tollgate.ops.actions import SWEEP_WORKFLOW, ensure_sweep_schedule

        client = await connect(s)
        if install:
            made = await ensure_sweep_schedule(client, s.task_queue)
            click.echo("sweep schedule created" if made else "sweep schedule already exists")
            return Exit.OK
        from tollgate.runtime.run_end import run_result

        handle = await client.start_workflow(
            SWEEP_WORKFLOW, SweepRequest(), id="receipt-sweep-manual", result_type=SweepReport,
            task_queue=s.task_queue, id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING)
        report = (await run_result(handle)).value  # a missed close costs seconds (ADR 0083)
        if as_json:
            click.echo(report.model_dump_json(indent=2))
        else:
            for line in sweep_lines(report, await _young_open(s)):
                click.echo(line)
        return Exit.OK if not report.drift_missing_at_target else Exit.REFUSED

    return go


def sweep_lines(report: SweepReport, young: int = 0) -> list[str]:
    """The sweep's answer as text: one summary line, one line per event that followed a
    receipt it settled (and the dead letters it closed), one per action key to act on, and
    how many open receipts it left alone as too recent (``young``)."""
    lines = [f"{report.checked} receipt(s) checked: {len(report.settled_found_at_target)} "
             f"settled (found at the target), {len(report.still_open)} still open, "
             f"{len(report.drift_missing_at_target)} missing at the target"]
    lines += [_followed(end) for end in report.followed]
    lines += [f"  missing   {key}" for key in report.drift_missing_at_target]
    lines += [f"  open      {key}" for key in report.still_open]
    if young:
        from contracts.sweep import SweepRequest

        minutes = int(SweepRequest().older_than.total_seconds() // 60)
        lines.append(f"  {young} open receipt(s) changed within {minutes} min not looked up "
                     "yet (the reconciler may still be on them); the sweep looks them up once "
                     "that old")
    return lines


def _followed(end: SweptEnd) -> str:
    """``  followed  WID: STOPPED -> SUCCEEDED (receipt_swept); dead letter 7 closed`` (ADRs
    0063, 0065), or the closed dead letters alone when no event followed."""
    from contracts.actions import SWEPT_CODE

    closed = ", ".join(str(n) for n in end.dead_letters_closed)
    letters = f"dead letter {closed} closed" if closed else ""
    if end.workflow_id is None:
        return f"  closed    {end.action_key}: {letters}, nothing to replay"
    return (f"  followed  {end.workflow_id}: {end.from_state} -> {end.to_state} ({SWEPT_CODE})"
            + (f"; {letters}" if letters else ""))


async def _young_open(s: Settings) -> int:
    """Open receipts too recent for this sweep; 0 when PostgreSQL cannot be asked from here
    (the sweep ran in the worker: its answer stands without this line)."""
    from datetime import UTC, datetime

    from adapters.postgres.receipts import ReceiptStore
    from contracts.sweep import SweepRequest

    if not s.dsn:
        return 0
    try:
        async with pool(s) as p:
            return await ReceiptStore(p).young_open(datetime.now(UTC) - SweepRequest().older_than)
    except Failure:
        return 0
