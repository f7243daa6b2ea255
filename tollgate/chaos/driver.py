"""A chaos run's events, driven through the stack while the schedule disrupts it: each event's
stand-in record and armed fault, its signed delivery (twice, or with an older one late), its
reviewers, its outcome; between submissions, the worker SIGKILLs and the server restarts the
plan asks for, and the on-call operator alongside (docs/reliability.md)."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from temporalio.client import Client
from temporalio.service import RPCError

from adapters.broker.cancel import within
from contracts import FinalOutcome
from policies.keys import action_key
from policies.signing import sign_json
from tollgate.bench.worker import WorkerProcess
from tollgate.chaos.oncall import on_call
from tollgate.chaos.reviewers import review
from tollgate.chaos.schedule import EventPlan, Plan
from tollgate.chaos.stack import LOOKUP_WINDOW_S
from tollgate.config.settings import Settings
from tollgate.dev.demo import care_due
from tollgate.dev.stack import DevStack
from tollgate.dev.stack_config import StackError
from tollgate.intake.submit import submit

TENANT = "acme"
CONCURRENCY = 8
#: The schedule's faults the stand-in knows by another name. ``timeout_late_write``: a delay
#: past the client's timeout before the write is stored, so it lands after the client gave up.
STANDIN_FAULT = {"slow_lookup_after_write": "fail_after_write",
                 "timeout_after_write": "hang_after_write", "timeout_late_write": "delay"}
#: A send answered 503 by a target that does not dedupe is an unknown write: correctly, it waits
#: out the reconciler's whole lookup window before it ends STOPPED with a dead letter. An event's
#: deadline is that window plus this.
DEADLINE_MARGIN_S = 120


class RestartFailed(RuntimeError):
    """A server the schedule restarted did not come back: the run ends, named in its report."""


class ChaosRun:
    def __init__(self, plan: Plan, stack: DevStack, client: Client, settings: Settings, *,
                 lookup_window_s: int = LOOKUP_WINDOW_S) -> None:
        self.plan, self.stack, self.client, self.settings = plan, stack, client, settings
        self.deadline_s = lookup_window_s + DEADLINE_MARGIN_S
        self.secrets = settings.tenant_secrets()
        self.worker: WorkerProcess | None = None
        self.outcomes: dict[str, FinalOutcome | str] = {}
        self.submitted = 0
        self.kills_done = 0
        self.restarts_done: list[str] = []
        self.reopened = 0
        self.main_runs: dict[int, str] = {}
        self._kill_lock = asyncio.Lock()

    def _raw(self, e: EventPlan, key: str, occurred: datetime) -> str:
        return sign_json(json.dumps(care_due(TENANT, e.customer, key, now=occurred)),
                         self.secrets)

    def _prepare(self, e: EventPlan) -> None:
        assert self.stack.standins is not None
        self.stack.standins.crm.upsert(
            TENANT, e.customer, first_name=e.first_name, pet_name=e.pet_name,
            consent_messaging=True, updated_at=datetime.now(UTC) - timedelta(hours=1))
        if e.fault == "none":
            return
        kind = STANDIN_FAULT.get(e.fault, e.fault)
        self.stack.standins.messaging.inject(
            kind, times=e.fault_times,  # type: ignore[arg-type]
            key=action_key(TENANT, f"evt-{e.key}", "messaging", "send_message"),
            ms=e.fault_ms if kind in ("delay", "hang_after_write") else None,
            lookup_delay_ms=e.fault_ms if e.fault == "slow_lookup_after_write" else 0)

    async def _submit(self, raw: str) -> str | None:
        """The workflow id that answered the delivery (quarantined and superseded ones too:
        they must end in a terminal state as well); retried through worker kills."""
        for _ in range(60):
            try:
                ack = await within(
                    submit(self.client, raw, task_queue=self.settings.task_queue), 30)
            except Exception:
                await asyncio.sleep(1)
                continue
            self.submitted += 1
            await self._maybe_kill()
            await self._maybe_restart()
            return ack.workflow_id
        return None

    async def _maybe_kill(self) -> None:
        async with self._kill_lock:
            if self.kills_done >= len(self.plan.kills):
                return
            after, pause_ms = self.plan.kills[self.kills_done]
            if self.submitted < after:
                return
            self.kills_done += 1
            assert self.worker is not None
            self.worker.proc.kill()  # SIGKILL: no drain, no goodbye
            await self.worker.proc.wait()
            await asyncio.sleep(pause_ms / 1000)
            self.worker = await WorkerProcess.start("tollgate", 0.0, self.stack)

    async def _maybe_restart(self) -> None:
        async with self._kill_lock:
            pending = self.plan.restarts[len(self.restarts_done):]
            if not pending or self.submitted < pending[0][0]:
                return
            server = pending[0][1]
            self.restarts_done.append(server)
            try:
                await asyncio.to_thread(self.stack.restart_postgres if server == "postgres"
                                        else self.stack.restart_temporal)
            except StackError as exc:  # a SystemExit: raised in a task it would stop the loop
                raise RestartFailed(f"{server} did not come back: {exc}") from None


    async def _outcome(self, wf_id: str) -> None:
        """The run's result; asked again while the Temporal server is away (a restart)."""
        handle = self.client.get_workflow_handle(wf_id, result_type=FinalOutcome)
        deadline = time.monotonic() + self.deadline_s
        while True:
            try:
                self.outcomes[wf_id] = await within(
                    handle.result(), max(1.0, deadline - time.monotonic()))
                return
            except RPCError as exc:
                if time.monotonic() >= deadline:
                    self.outcomes[wf_id] = f"no outcome: {type(exc).__name__}"
                    return
                await asyncio.sleep(1)
            except Exception as exc:
                self.outcomes[wf_id] = f"no outcome: {type(exc).__name__}"
                return

    async def one(self, e: EventPlan, gate: asyncio.Semaphore) -> None:
        async with gate:
            self._prepare(e)
            now = datetime.now(UTC)
            raw = self._raw(e, e.key, now)
            ids: list[str | None]
            if e.delivery == "duplicate":
                ids = list(await asyncio.gather(self._submit(raw), self._submit(raw)))
            else:
                ids = [await self._submit(raw)]
            if e.delivery == "out_of_order":  # an older event for the same customer, late
                older = self._raw(e, f"{e.key}-old", now - timedelta(minutes=30))
                ids.append(await self._submit(older))
            main = ids[0]
            if main:
                self.main_runs[e.index] = main
            for wf in {i for i in ids if i}:
                self.outcomes.setdefault(wf, "not finished")
            if main:
                await review(self.client, main, e, tenant=TENANT, deadline_s=self.deadline_s,
                             keys=self.settings.state_dir)
            # The older event is superseded when the newer one was admitted first; when a kill
            # or a restart held the newer one's admission back, the older one is admitted and
            # waits for a reviewer like any other event (seed 21 found it waiting).
            for other in {i for i in ids if i and i != main}:
                await review(self.client, other, replace(e, review="approve"), tenant=TENANT,
                             deadline_s=self.deadline_s, keys=self.settings.state_dir)
            await asyncio.gather(*(self._outcome(wf) for wf in {i for i in ids if i}))

    async def run(self) -> None:
        self.worker = await WorkerProcess.start("tollgate", 0.0, self.stack)
        gate = asyncio.Semaphore(CONCURRENCY)
        operator = asyncio.create_task(on_call(self.stack, self))
        try:
            # A task group, not gather: when one step fails (a server that did not come back
            # from its restart), the other events' tasks stop with it instead of retrying
            # against a stack that is being torn down.
            async with asyncio.TaskGroup() as tasks:
                for e in self.plan.events:
                    tasks.create_task(self.one(e, gate))
        except ExceptionGroup as group:
            raise group.exceptions[0] from None
        finally:
            operator.cancel()
            await self.worker.stop()
