"""`tollgate ops status`: one screen for an operator at a terminal, from PostgreSQL (so it
answers while Temporal is down) and a brief probe of the codec server, and an exit code a cron
job or a probe can act on."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import click

from tollgate.cli import status_signs
from tollgate.cli.common import Command, json_option, pool
from tollgate.cli.ops_authority import operator_token, read_scope, reader
from tollgate.cli.output import emit_json, table
from tollgate.cli.status_signs import age as _age
from tollgate.runtime.exits import Exit

if TYPE_CHECKING:
    from tollgate.config.settings import Settings


def needs_a_human(snap: dict[str, Any], *, max_past_sla: int, max_unknown: int,
                  max_dead_letters: int, max_open_age_s: float,
                  max_outbox_age_s: float = 300.0, max_failing_steps: int = 0) -> list[str]:
    """Why the screen needs a person, one reason a line; empty when all is within limits."""
    why = []
    past_sla = sum(r["past_sla"] for r in snap["reviews"])
    if past_sla > max_past_sla:
        why.append(f"{past_sla} review(s) past their SLA (limit {max_past_sla})")
    if snap["open_unknown_writes"] > max_unknown:
        why.append(f"{snap['open_unknown_writes']} unknown write(s) open (limit {max_unknown})")
    dead = sum(r["count"] for r in snap["dead_letters"])
    if dead > max_dead_letters:
        why.append(f"{dead} dead letter(s) waiting (limit {max_dead_letters})")
    if snap.get("stale_replays"):  # in no queue: a person finds out how its replay ended
        ids = ", ".join(str(r["dead_letter"]) for r in snap["stale_replays"])
        why.append(f"{len(snap['stale_replays'])} replayed dead letter(s) in no queue: "
                   f"{ids} (docs/runbook.md, Dead letters)")
    for row in snap["states"]:
        # AWAITING_REVIEW waits for people by design: its limit is the SLA, counted above.
        age = row["oldest_age_s"]
        if age is not None and row["state"] != "AWAITING_REVIEW" and age > max_open_age_s:
            why.append(f"oldest {row['state']} record is {_age(age)} old "
                       f"(limit {_age(max_open_age_s)})")
    outbox = snap.get("outbox") or {}
    if outbox.get("oldest_age_s") is not None and outbox["oldest_age_s"] > max_outbox_age_s:
        why.append(f"outbox stuck: oldest unsent row is {_age(outbox['oldest_age_s'])} old, "
                   f"{outbox['depth']} waiting (limit {_age(max_outbox_age_s)})")
    if outbox.get("moved_aside"):
        why.append(f"{outbox['moved_aside']} outbox row(s) moved aside "
                   "(tollgate ops outbox list)")
    if snap["closed_switches"]:
        why.append(f"{len(snap['closed_switches'])} kill switch(es) closed")
    return why + status_signs.reasons(snap, max_failing_steps=max_failing_steps)


def show(snap: dict[str, Any], why: list[str]) -> None:
    click.echo(f"as of {snap['as_of']:%Y-%m-%d %H:%M:%S} UTC"
               + (f", tenant {snap['tenant']}" if snap.get("tenant") else ""))
    table(["state", "records", "oldest"], [
        (r["state"], r["count"], "-" if r["oldest_age_s"] is None else _age(r["oldest_age_s"]))
        for r in snap["states"]] or [("(no events)", 0, "-")])
    if snap["reviews"]:
        table(["tenant", "reviews waiting", "past SLA"],
              [(r["tenant_id"], r["waiting"], r["past_sla"]) for r in snap["reviews"]])
    dead = ", ".join(f"{r['reason']} {r['count']}" for r in snap["dead_letters"]) or "none"
    # Moved aside (ADR 0059), and closed by hand: the write stays unknown, off the books.
    apart = [f"{n} {what}" for n, what in (
        (snap["unknown_writes_moved_aside"], "moved aside to dead letters"),
        (snap["unknown_writes_closed_by_hand"], "closed by hand")) if n]
    aside_text = f" ({', '.join(apart)})" if apart else ""
    click.echo(f"unknown writes open: {snap['open_unknown_writes']}{aside_text}"
               f" · dead letters: {dead}")
    if snap.get("stale_replays"):
        click.echo("replayed dead letters in no queue (the write still open, its replay "
                   "ended or claimed longer ago than a replay runs): " + ", ".join(
                       f"{r['dead_letter']} (replay {r['replay']}, "
                       + (f"ended {r['ended']}, " if r.get("ended") else "")
                       + ("lookup window unreadable, " if r.get("window_unreadable") else "")
                       + f"claimed {_age(r['claimed_age_s'])} ago)"
                       for r in snap["stale_replays"]))
    switches = ", ".join(f"{r['adapter']}/{r['tenant_id']}" for r in snap["closed_switches"])
    click.echo(f"closed kill switches: {switches or 'none'}")
    box = snap["outbox"]
    oldest = "-" if box["oldest_age_s"] is None else _age(box["oldest_age_s"])
    click.echo(f"outbox: {box['depth']} waiting, oldest {oldest}, "
               f"{box['moved_aside']} moved aside")
    sweep = snap["last_sweep"]
    if sweep is None:
        click.echo("receipt sweep: never ran (tollgate ops sweep --install)")
    elif sweep["detail"] is None:  # read with a token: one sweep's figures are every tenant's
        click.echo(f"receipt sweep: {sweep['at']:%Y-%m-%d %H:%M} UTC (every tenant's receipts)")
    else:
        d = sweep["detail"] if isinstance(sweep["detail"], dict) else json.loads(sweep["detail"])
        click.echo(f"receipt sweep: {sweep['at']:%Y-%m-%d %H:%M} UTC, checked {d['checked']}, "
                   f"drift {d['drift_missing_at_target']}, still open {d['still_open']}")
    for line in status_signs.lines(snap):
        click.echo(line)
    click.echo("needs a human: " + ("; ".join(why) if why else "nothing"))


@click.command()
@json_option
@click.option("--watch", type=click.FloatRange(min=1), metavar="SECONDS",
              help="refresh every SECONDS until Ctrl-C")
@click.option("--max-past-sla", type=click.IntRange(min=0), default=0,
              envvar="TOLLGATE_STATUS_MAX_PAST_SLA", show_envvar=True,
              help="reviews past their SLA before it needs a human")
@click.option("--max-unknown", type=click.IntRange(min=0), default=0,
              envvar="TOLLGATE_STATUS_MAX_UNKNOWN", show_envvar=True,
              help="open unknown writes before it needs a human")
@click.option("--max-dead-letters", type=click.IntRange(min=0), default=0,
              envvar="TOLLGATE_STATUS_MAX_DEAD_LETTERS", show_envvar=True,
              help="waiting dead letters before it needs a human")
@click.option("--max-open-minutes", type=click.FloatRange(min=1), default=60.0,
              envvar="TOLLGATE_STATUS_MAX_OPEN_MINUTES", show_envvar=True,
              help="age of the oldest record in a state it should leave on its own")
@click.option("--max-failing-steps", type=click.IntRange(min=0), default=0,
              envvar="TOLLGATE_STATUS_MAX_FAILING_STEPS", show_envvar=True,
              help="steps failing try after try (3 tries or more) before it needs a human")
@operator_token
def status(as_json: bool, watch: float | None, max_past_sla: int, max_unknown: int,
           max_dead_letters: int, max_open_minutes: float, max_failing_steps: int,
           token: str | None) -> Command:
    """Records per state and the oldest in each open one, reviews waiting and past SLA per tenant,
    open unknown writes (one moved aside to a dead letter awaiting a person is counted there,
    one whose dead letter was closed by hand apart), dead letters by reason, closed switches,
    the last sweep, the outbox (rows waiting, the oldest's age, rows moved aside), held runs by
    what holds them, steps failing try after try, reviewer notices not delivered, whether a
    worker polls the task queue and each target's, and whether the codec server answers. Exit 6
    when something needs a human (the thresholds below; an outbox row older than
    TOLLGATE_OUTBOX_STALL_SECONDS, any row moved aside, a notice given up or unknown, no worker
    polling, or Temporal unreachable, refusing the probe, without the namespace or failing,
    while events are open; sends waiting on a target's queue no worker polls; the codec server
    down), else 0. With --token, the token's tenant's figures only, judged alone (ADR 0076):
    the switches covering it, its own and the global ones; the workers, targets and codec
    server stay everyone's, and the last sweep's time without its figures."""

    async def go(s: Settings) -> int:
        from adapters.postgres.status import StatusStore
        from tollgate.ops.codec_probe import probe_codec
        from tollgate.ops.worker_probe import probe_target_queues, probe_workers

        only = read_scope(await reader(s, token), None, rows="figures")
        async with pool(s) as p:
            while True:
                snap = await StatusStore(p).snapshot(datetime.now(UTC), only)
                if only:
                    snap["tenant"] = only
                # Not PostgreSQL, but bounded (PROBE_TIMEOUT_S each): the Web UI's one silent
                # failure, and runs that stop moving because no worker runs them.
                snap["codec"], snap["workers"] = await asyncio.gather(probe_codec(s),
                                                                      probe_workers(s))
                # Sends wait on their target's queue with no timeout: say when none polls it.
                snap["targets"] = await probe_target_queues(s, snap["workers"])
                why = needs_a_human(snap, max_past_sla=max_past_sla, max_unknown=max_unknown,
                                    max_dead_letters=max_dead_letters,
                                    max_open_age_s=max_open_minutes * 60,
                                    max_outbox_age_s=s.http.outbox_stall_s,
                                    max_failing_steps=max_failing_steps)
                if as_json:
                    emit_json({**snap, "needs_a_human": why})
                else:
                    show(snap, why)
                if watch is None:
                    return Exit.ATTENTION if why else Exit.OK
                await asyncio.sleep(watch)
                click.clear()

    go.stops_on_interrupt = True  # type: ignore[attr-defined]
    return go
