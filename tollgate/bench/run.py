"""The runner behind ``tollgate bench``: phases, events and rounds, each round with its
scripted reviewer. ``tollgate.bench`` holds the command; ``tollgate.bench.render`` the output;
``worker_group.py`` the worker processes, ``events.py`` the events, ``parked.py`` the parked
ones, and ``pipeline.py`` how an event reaches each pipeline."""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from temporalio.client import Client

from adapters.broker.cancel import within
from tollgate.bench.baseline import BASELINES
from tollgate.bench.events import Events
from tollgate.bench.history import history_shapes
from tollgate.bench.load import machine_load
from tollgate.bench.parked import PARKED_TENANT, park
from tollgate.bench.pgstats import PgStats
from tollgate.bench.pipeline import event_outcome, submit_event
from tollgate.bench.pyspy import Recorder
from tollgate.bench.reviewer import REVIEWER, REVIEWER_ROLE, TENANT, Reviewer
from tollgate.bench.slowest import slowest_history
from tollgate.bench.stats import cpu_ms, tree_cpu_ms
from tollgate.bench.tally import Phase, Tally, plan, send_rate, split
from tollgate.bench.worker_group import WorkerGroup
from tollgate.config.settings import Settings
from tollgate.dev.endpoints import stack_env
from tollgate.dev.stack import DevStack
from tollgate.runtime.client import build_client
from tollgate.runtime.identity import issue_dev_token

#: Completed events between two worker RSS readings.
RSS_EVERY = 1000
HISTORY_SAMPLES = 3


class Bench:
    def __init__(self, stack: DevStack, args: argparse.Namespace, rng: random.Random,
                 settings: Settings, client: Client) -> None:
        self.stack, self.args, self.rng = stack, args, rng
        self.settings, self.client = settings, client
        self.events = Events(stack, settings.tenant_secrets())
        #: The scripted reviewer's token, signed with the stack's dev key (before any worker
        #: starts and reads it), checked by Tollgate's worker as worker.py's checks it.
        self.token = issue_dev_token(settings.state_dir, reviewer=REVIEWER, role=REVIEWER_ROLE,
                                     tenant=TENANT)
        self.workers: dict[str, WorkerGroup] = {}
        self.pg_stats: PgStats | None = None  # --pg-stats: set by the command once enabled
        self.samples: dict[str, list[str]] = {}  # finished plain-phase workflows, per pipeline
        chosen = list(BASELINES) if args.baseline == "both" else [args.baseline]
        variants = [f"ss+{v}" for v in getattr(args, "variants", ())]
        #: The baselines asked for, their variants, then Tollgate; rounds go this order, then
        #: reversed.
        self.pipelines: tuple[str, ...] = (*chosen, *variants, "tollgate")

    @classmethod
    async def create(cls, stack: DevStack, args: argparse.Namespace,
                     rng: random.Random) -> Bench:
        settings = Settings.from_env(stack_env(stack))
        client = await build_client(settings.temporal_address, settings.namespace, env=settings.env)
        return cls(stack, args, rng, settings, client)

    def _cpu(self, pipeline: str) -> dict[str, float]:
        postmaster = (self.stack.state_dir / "pgdata" / "postmaster.pid").read_text().split()
        assert self.stack.temporal_proc is not None
        found = {"server": tree_cpu_ms(self.stack.temporal_proc.pid),
                 "postgres": tree_cpu_ms(int(postmaster[0])),
                 "worker": self.workers[pipeline].cpu_ms()}
        found["driver"] = cpu_ms(os.getpid())  # this process: client calls and the stand-ins
        return found

    async def history_shapes(self) -> dict[str, Any]:
        return await history_shapes(self.client, self.samples)

    async def close(self) -> None:
        await asyncio.gather(*(w.stop() for w in self.workers.values()))
        self.workers.clear()

    # --- phases and rounds --------------------------------------------------------------

    async def run_phase(self, phase: Phase) -> dict[str, Any]:
        await self.close()
        load_at_start = machine_load()
        for pipeline in self.pipelines:
            tollgate = pipeline == "tollgate"
            self.workers[pipeline] = await WorkerGroup.start(
                pipeline, self.args.workers if tollgate else 1, phase.model_latency,
                self.stack, ",".join(self.args.rates) if tollgate else "")
        tallies = {p: Tally() for p in self.pipelines}
        parked_rss = await self._park(phase) if phase.parked else None
        for pipeline in self.pipelines:
            if self.args.warmup:
                await self.run_round(phase, pipeline, self.args.warmup, Tally(), dups=False)
        since = datetime.now(UTC)
        if self.pg_stats:
            await self.pg_stats.start()
        spy = Recorder(Path(self.args.py_spy), phase.name, self.workers["tollgate"].pids()) \
            if getattr(self.args, "py_spy", None) else None
        sizes = split(self.args.events, self.args.rounds)
        for r, size in enumerate(sizes):
            order = self.pipelines if r % 2 == 0 else self.pipelines[::-1]
            for pipeline in order:
                await self.run_round(phase, pipeline, size, tallies[pipeline], dups=True)
        pg = await self.pg_stats.stop(tallies["tollgate"].events) if self.pg_stats else None
        profile = await asyncio.to_thread(spy.stop) if spy else None
        for pipeline, tally in tallies.items():
            tally.peak_rss_mb = self.workers[pipeline].rss_mb("peak_rss_kb")
            if tally.slowest is not None:
                tally.slowest_history = await slowest_history(
                    self.client, tally.slowest[1], tally.slowest[0])
        await self.close()
        if phase.name == "plain":
            self.samples = {p: t.samples for p, t in tallies.items()}
        assert self.stack.standins is not None
        summaries = {p: t.summary() for p, t in tallies.items()}
        # Only Tollgate sends to the stand-in: what the target saw is Tollgate's.
        summaries["tollgate"].update(pg_stats=pg, py_spy=profile)
        summaries["tollgate"]["target_sends"] = send_rate(
            self.stack.standins.messaging.messages(TENANT), since)
        return {"settings": {"duplicates": phase.duplicates,
                             "model_latency_s": phase.model_latency, "parked": phase.parked,
                             "worker_rss_mb_once_parked": parked_rss,
                             "load": {"start": load_at_start, "end": machine_load()}},
                **summaries}

    async def _park(self, phase: Phase) -> float:
        """Park ``phase.parked`` events (``parked.py``); the Tollgate worker's RSS once all of
        them wait for review, in MB."""
        events = self.events.make("tollgate", phase, phase.parked, tenant=PARKED_TENANT)
        # Each parked event runs up to review here: allow a generous 1 s apiece on top.
        await park(self.client, self.settings.task_queue, events, self.args.concurrency,
                   self.args.event_timeout + phase.parked)
        return round(self.workers["tollgate"].rss_mb(), 1)

    async def run_round(self, phase: Phase, pipeline: str, size: int, tally: Tally, *,
                        dups: bool) -> None:
        fraction = phase.duplicates if dups else 0.0
        order = plan(size, fraction, 2 * self.args.concurrency, self.rng)
        events = self.events.make(pipeline, phase, max(order) + 1)
        tally.distinct += len(events)
        assert self.stack.standins is not None
        messaging = self.stack.standins.messaging
        gate = asyncio.Semaphore(self.args.concurrency)
        stop, handled = asyncio.Event(), set[str]()
        reviewer = asyncio.create_task(Reviewer(self.client, pipeline, tally, self.token).run(
            stop, handled, self.args.review_poll))
        worker = self.workers[pipeline]
        trips, messages = await worker.round_trips(), messaging.message_count
        cpu = self._cpu(pipeline)
        started = time.perf_counter()
        done_before, missed_before = tally.events, len(tally.missed_closes)

        async def one(wf_id: str, raw: str) -> None:
            async with gate:
                t0, sent = time.perf_counter(), time.time()  # the server's clock: close times
                try:
                    status = await submit_event(self.client, self.settings.task_queue,
                                                pipeline, wf_id, raw)
                except Exception as exc:  # counted, shown, and the run goes on
                    tally.outcomes[f"submit_error:{type(exc).__name__}"] += 1
                    return
                ack = time.perf_counter() - t0
                if status != "accepted":
                    tally.duplicate_ack.append(ack)
                    tally.outcomes[f"ack:{status}"] += 1
                    return
                tally.ack.append(ack)
                try:
                    state, missed = await within(event_outcome(self.client, pipeline, wf_id),
                                                 self.args.event_timeout + phase.model_latency)
                except Exception as exc:
                    tally.outcomes[f"result_error:{type(exc).__name__}"] += 1
                    return
                tally.finished(wf_id, time.perf_counter() - t0)
                if missed is not None:  # the close was learned late (ADR 0083): both kept
                    tally.missed_close(wf_id, time.perf_counter() - t0, missed.timestamp() - sent)
                tally.outcomes[state] += 1
                tally.events += 1
                if len(tally.samples) < HISTORY_SAMPLES and phase.name == "plain":
                    tally.samples.append(wf_id)
                if tally.events % RSS_EVERY == 0:
                    tally.rss_mb_at[tally.events] = worker.rss_mb()

        await asyncio.gather(*(one(*events[i]) for i in order))
        wall = time.perf_counter() - started
        stop.set()
        await reviewer
        spent = {k: v - cpu[k] for k, v in self._cpu(pipeline).items()}
        tally.add_round(tally.events - done_before, wall, spent,
                        missed_closes=len(tally.missed_closes) - missed_before)
        tally.round_trips.update((await worker.round_trips()) - trips)
        tally.messages += messaging.message_count - messages
        tally.submissions += len(order)
