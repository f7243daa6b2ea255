"""The runner behind ``tollgate bench``: worker processes, events, rounds and the scripted
reviewer. ``tollgate.bench`` holds the command; ``tollgate.bench.report`` the output."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from temporalio.client import Client, WithStartWorkflowOperation
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from contracts import EventState, FinalOutcome, ReviewDecision
from policies.signing import sign_json
from tollgate.bench.baseline import BASELINES, BaselineWorkflow
from tollgate.bench.history import history_shapes
from tollgate.bench.stats import cpu_ms, memory_kb, tree_cpu_ms
from tollgate.bench.tally import Phase, Tally, plan, split
from tollgate.bench.worker import WorkerProcess
from tollgate.client import build_client
from tollgate.config import Settings
from tollgate.demo import care_due
from tollgate.devstack import DevStack
from tollgate.intake import submit
from workflows.process_event import ProcessEventWorkflow

TENANT = "acme"
WORKFLOW_TYPES = {"tollgate": "ProcessEvent",
                  **{name: b.workflow_type for name, b in BASELINES.items()}}
#: Completed events between two worker RSS readings.
RSS_EVERY = 1000
HISTORY_SAMPLES = 3


class Bench:
    def __init__(self, stack: DevStack, args: argparse.Namespace, rng: random.Random,
                 settings: Settings, client: Client) -> None:
        self.stack, self.args, self.rng = stack, args, rng
        self.settings, self.client = settings, client
        self.secrets = settings.tenant_secrets()
        self.serial = 0
        self.run_tag = datetime.now(UTC).strftime("%H%M%S")
        self.workers: dict[str, WorkerProcess] = {}
        self.samples: dict[str, list[str]] = {}  # finished plain-phase workflows, per pipeline
        chosen = list(BASELINES) if args.baseline == "both" else [args.baseline]
        #: The baselines asked for, then Tollgate; rounds go this order, then reversed.
        self.pipelines: tuple[str, ...] = (*chosen, "tollgate")

    @classmethod
    async def create(cls, stack: DevStack, args: argparse.Namespace,
                     rng: random.Random) -> Bench:
        settings = Settings.from_env(stack.env())
        client = await build_client(settings.temporal_address, settings.namespace, env=settings.env)
        return cls(stack, args, rng, settings, client)

    def _pids(self, pipeline: str) -> dict[str, int]:
        postmaster = (self.stack.state_dir / "pgdata" / "postmaster.pid").read_text().split()
        assert self.stack.temporal_proc is not None
        return {"server": self.stack.temporal_proc.pid, "postgres": int(postmaster[0]),
                "worker": self.workers[pipeline].pid}

    def _cpu(self, pipeline: str) -> dict[str, float]:
        found = {name: tree_cpu_ms(pid) for name, pid in self._pids(pipeline).items()}
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
        for pipeline in self.pipelines:
            self.workers[pipeline] = await WorkerProcess.start(
                pipeline, phase.model_latency, self.stack)
        tallies = {p: Tally() for p in self.pipelines}
        for pipeline in self.pipelines:
            if self.args.warmup:
                await self.run_round(phase, pipeline, self.args.warmup, Tally(), dups=False)
        sizes = split(self.args.events, self.args.rounds)
        for r, size in enumerate(sizes):
            order = self.pipelines if r % 2 == 0 else self.pipelines[::-1]
            for pipeline in order:
                await self.run_round(phase, pipeline, size, tallies[pipeline], dups=True)
        for pipeline, tally in tallies.items():
            tally.peak_rss_mb = memory_kb(self.workers[pipeline].pid)["peak_rss_kb"] / 1024
        await self.close()
        if phase.name == "plain":
            self.samples = {p: t.samples for p, t in tallies.items()}
        return {"settings": {"duplicates": phase.duplicates,
                             "model_latency_s": phase.model_latency},
                **{p: t.summary() for p, t in tallies.items()}}

    def _events(self, pipeline: str, phase: Phase, n: int) -> list[tuple[str, str]]:
        """n signed CARE_DUE events, each for a customer of its own (so none supersedes
        another), as (workflow id, raw JSON)."""
        now = datetime.now(UTC)
        assert self.stack.standins is not None
        crm = self.stack.standins.crm
        events = []
        for _ in range(n):
            self.serial += 1
            customer = f"B-{self.run_tag}-{self.serial}"
            key = f"bench-{self.run_tag}-{phase.name}-{pipeline}-{self.serial}"
            crm.upsert(TENANT, customer, first_name="Sam", pet_name="Rex",
                       consent_messaging=True, updated_at=now - timedelta(days=1))
            raw = sign_json(json.dumps(care_due(TENANT, customer, key, now=now)), self.secrets)
            wf_id = (f"event/{TENANT}/{key}" if pipeline == "tollgate"
                     else f"bench-{pipeline}/{TENANT}/{key}")
            events.append((wf_id, raw))
        return events

    async def run_round(self, phase: Phase, pipeline: str, size: int, tally: Tally, *,
                        dups: bool) -> None:
        fraction = phase.duplicates if dups else 0.0
        order = plan(size, fraction, 2 * self.args.concurrency, self.rng)
        events = self._events(pipeline, phase, max(order) + 1)
        tally.distinct += len(events)
        assert self.stack.standins is not None
        messaging = self.stack.standins.messaging
        gate = asyncio.Semaphore(self.args.concurrency)
        stop, handled = asyncio.Event(), set[str]()
        reviewer = asyncio.create_task(self._review(pipeline, stop, handled, tally))
        worker = self.workers[pipeline]
        trips, messages = await worker.round_trips(), messaging.message_count
        cpu = self._cpu(pipeline)
        started = time.perf_counter()
        done_before = tally.events

        async def one(wf_id: str, raw: str) -> None:
            async with gate:
                t0 = time.perf_counter()
                try:
                    status = await self._submit(pipeline, wf_id, raw)
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
                    state = await asyncio.wait_for(self._result(pipeline, wf_id),
                                                   self.args.event_timeout + phase.model_latency)
                except Exception as exc:
                    tally.outcomes[f"result_error:{type(exc).__name__}"] += 1
                    return
                tally.e2e.append(time.perf_counter() - t0)
                tally.outcomes[state] += 1
                tally.events += 1
                if len(tally.samples) < HISTORY_SAMPLES and phase.name == "plain":
                    tally.samples.append(wf_id)
                if tally.events % RSS_EVERY == 0:
                    tally.rss_mb_at[tally.events] = memory_kb(worker.pid)["rss_kb"] / 1024

        await asyncio.gather(*(one(*events[i]) for i in order))
        wall = time.perf_counter() - started
        stop.set()
        await reviewer
        spent = {k: v - cpu[k] for k, v in self._cpu(pipeline).items()}
        tally.cpu_ms.update(spent)
        tally.round_trips.update((await worker.round_trips()) - trips)
        tally.messages += messaging.message_count - messages
        tally.submissions += len(order)
        tally.wall_s += wall
        finished = tally.events - done_before
        tally.rounds.append({"events": finished, "wall_s": round(wall, 2),
                             "events_per_s": round(finished / wall, 2)})

    async def _submit(self, pipeline: str, wf_id: str, raw: str) -> str:
        if pipeline == "tollgate":
            ack = await submit(self.client, raw, task_queue=self.settings.task_queue)
            return ack.status
        baseline = BASELINES[pipeline]
        start: WithStartWorkflowOperation[Any, str] = WithStartWorkflowOperation(
            baseline.workflow_type, raw, id=wf_id, task_queue=baseline.queue, result_type=str,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE)
        try:
            return await self.client.execute_update_with_start_workflow(
                BaselineWorkflow.intake, start_workflow_operation=start)  # same on both
        except WorkflowAlreadyStartedError:  # as the starter does: answer with the old result
            with contextlib.suppress(WorkflowAlreadyStartedError):
                await start.workflow_handle()  # the operation's own copy of the error, read
            await self.client.get_workflow_handle(wf_id).result()
            return "duplicate"

    async def _result(self, pipeline: str, wf_id: str) -> str:
        if pipeline == "tollgate":
            out = await self.client.get_workflow_handle(wf_id, result_type=FinalOutcome).result()
            return out.state.value
        await self.client.get_workflow_handle(wf_id).result()
        return EventState.SUCCEEDED.value

    # --- the scripted reviewer ----------------------------------------------------------

    async def _review(self, pipeline: str, stop: asyncio.Event, handled: set[str],
                      tally: Tally) -> None:
        """List what waits for review (one visibility call per poll, whatever the number in
        flight) and decide each record once."""
        query = (f"WorkflowType = '{WORKFLOW_TYPES[pipeline]}' AND ExecutionStatus = 'Running'"
                 f" AND TollgateState = '{EventState.AWAITING_REVIEW.value}'")
        pending: set[asyncio.Task[None]] = set()
        while not stop.is_set():
            tally.reviewer["list_calls"] += 1
            try:
                async for wf in self.client.list_workflows(query, page_size=1000):
                    if wf.id not in handled:
                        handled.add(wf.id)
                        task = asyncio.create_task(self._decide(pipeline, wf.id, handled, tally))
                        pending.add(task)
                        task.add_done_callback(pending.discard)
            except Exception:
                tally.reviewer["list_errors"] += 1
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.args.review_poll)
        await asyncio.gather(*pending)

    async def _decide(self, pipeline: str, wf_id: str, handled: set[str], tally: Tally) -> None:
        handle = self.client.get_workflow_handle(wf_id)
        try:
            if pipeline != "tollgate":
                await handle.signal(BaselineWorkflow.approve)
                tally.reviewer["approved"] += 1
                return
            tally.reviewer["queries"] += 1
            ticket = await handle.query(ProcessEventWorkflow.review_ticket)
            if ticket.state != EventState.AWAITING_REVIEW or ticket.request_id is None:
                tally.reviewer["not_waiting"] += 1
                return
            ack = await handle.execute_update(ProcessEventWorkflow.review, ReviewDecision(
                request_id=ticket.request_id, decision="approve", reviewer="bench.reviewer",
                role="reviewer", reason="scripted approval", draft_version=ticket.draft_version
                or 1, tenant_id=TENANT))
            tally.reviewer["approved" if ack.accepted else "refused"] += 1
        except RPCError as exc:
            if exc.status == RPCStatusCode.NOT_FOUND:  # closed: the list lagged behind it
                tally.reviewer["not_waiting"] += 1
                return
            tally.reviewer["errors"] += 1
            handled.discard(wf_id)  # looked at again on the next poll
        except Exception:
            tally.reviewer["errors"] += 1
            handled.discard(wf_id)
