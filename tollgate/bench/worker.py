"""The worker process of ``tollgate bench`` and the bench's handle on it (``WorkerProcess``):
one per pipeline, so each one's CPU and memory are its own.
``python -m tollgate.bench.worker tollgate|same-shape|naive|ss+VARIANT
[--model-latency S]``.

It prints ``ready`` once its workers poll, then answers ``stats`` on stdin with one JSON line
(PostgreSQL round trips so far, by kind) and exits on ``stop`` or end of input. The Tollgate
workers are ``tollgate.runtime.workers``' main and draft workers, as ``worker.py`` runs them;
only the drafting provider is wrapped, here, when a model latency is asked for. Logs go to
stderr at INFO, as ``python worker.py`` logs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

from temporalio import activity
from temporalio.client import Client
from temporalio.worker import PollerBehaviorAutoscaling, Worker

from adapters.broker.cancel import within
from tollgate.bench.baseline import BaselineActivities
from tollgate.bench.variants import PIPELINES
from tollgate.config.settings import Settings
from tollgate.dev.endpoints import stack_env
from tollgate.dev.stack import DevStack
from tollgate.runtime.client import build_client

#: Round trips by "activity/kind", counted at the asyncpg connection (every pool call goes
#: through it).
ROUND_TRIPS: Counter[str] = Counter()


def count_round_trips() -> None:
    """Count each call that costs one round trip: statements, BEGIN/COMMIT and the pool's
    reset on release. (Prepares on a statement-cache miss are not counted: a few per
    connection, not per event.)"""
    from asyncpg.connection import Connection

    def wrap(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
        def call(self: Any, query: str, *args: Any, **kwargs: Any) -> Any:
            head = query.lstrip()[:40].upper()
            kind = ("reset" if head.startswith("SELECT PG_ADVISORY_UNLOCK_ALL") else
                    "begin" if head.startswith("BEGIN") else
                    "commit" if head.startswith("COMMIT") else
                    "rollback" if head.startswith("ROLLBACK") else name)
            step = activity.info().activity_type if activity.in_activity() else "other"
            ROUND_TRIPS[f"{step}/{kind}"] += 1
            return original(self, query, *args, **kwargs)
        return call

    for name in ("execute", "executemany", "fetch", "fetchval", "fetchrow"):
        setattr(Connection, name, wrap(name, getattr(Connection, name)))


class SlowProvider:
    """Any drafting provider, answering ``latency`` seconds later (a slow model)."""

    def __init__(self, inner: Any, latency: float) -> None:
        self.inner, self.latency = inner, latency
        self.name, self.model = inner.name, inner.model

    async def propose(self, request: Any) -> Any:
        await asyncio.sleep(self.latency)
        return await self.inner.propose(request)


@asynccontextmanager
async def tollgate_workers(
    client: Client, settings: Settings, latency: float
) -> AsyncIterator[None]:
    from tollgate.runtime.identity import install_decision_verifier
    from tollgate.runtime.workers import draft_worker, main_worker

    async with AsyncExitStack() as stack:
        # As worker.py's (ADR 0085): the run's validator checks every decision's token.
        verifier = await install_decision_verifier(settings)
        stack.callback(verifier.stop)
        await stack.enter_async_context(main_worker(client, settings))
        if latency <= 0:
            await stack.enter_async_context(draft_worker(client, settings))
        else:
            from activities.draft import DraftActivities
            from tollgate.runtime.models import build_provider
            from workflows.process_event import DRAFT_TASK_QUEUE

            provider = SlowProvider(build_provider(settings.models.draft()), latency)
            drafts = DraftActivities(provider)
            await stack.enter_async_context(
                Worker(client, task_queue=DRAFT_TASK_QUEUE, activities=[drafts.draft_message]))
        yield


@asynccontextmanager
async def baseline_workers(client: Client, name: str, latency: float) -> AsyncIterator[None]:
    acts, baseline = BaselineActivities(latency), PIPELINES[name]
    # The SDK's defaults, but for the ``pollers`` variant: polls scaled as Tollgate's main
    # worker's are (ADR 0087). Not through tollgate.runtime.workers: each module this process
    # imports is one more the default sandbox looks over per run.
    polls: dict[str, Any] = {"workflow_task_poller_behavior": PollerBehaviorAutoscaling()} \
        if baseline.variant.pollers else {}
    main = Worker(client, task_queue=baseline.queue, workflows=[baseline.workflow],
                  activities=acts.main_queue(), **polls)
    draft = Worker(client, task_queue=baseline.draft_queue, activities=[acts.draft])
    async with AsyncExitStack() as stack:
        await stack.enter_async_context(main)
        await stack.enter_async_context(draft)
        if baseline.send_queue:  # a variant's: the send on a queue of its own, as Tollgate's
            await stack.enter_async_context(
                Worker(client, task_queue=baseline.send_queue, activities=[acts.step]))
        yield


async def serve(pipeline: str, latency: float) -> None:
    settings = Settings.from_env()
    client = await build_client(settings.temporal_address, settings.namespace, env=settings.env)
    workers = (tollgate_workers(client, settings, latency) if pipeline == "tollgate"
               else baseline_workers(client, pipeline, latency))
    loop = asyncio.get_running_loop()
    async with workers:
        print("ready", flush=True)
        while True:
            line = (await loop.run_in_executor(None, sys.stdin.readline)).strip()
            if line == "stats":
                print(json.dumps({"round_trips": dict(ROUND_TRIPS)}), flush=True)
            elif line in ("stop", ""):
                return


#: The checkout this bench's own code comes from. Workers start there (``-m`` puts the working
#: directory first on their path), so they run the same code as the process that submits and
#: measures, wherever the bench was started: a bench started with another checkout on
#: ``PYTHONPATH`` (an A/B run against an older commit) is that commit in every process.
CODE_ROOT = Path(__file__).resolve().parents[2]


class WorkerProcess:
    """One ``tollgate.bench.worker`` process, talked to over its stdin/stdout."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    @classmethod
    async def start(cls, pipeline: str, latency: float, stack: DevStack,
                    rates: str = "") -> WorkerProcess:
        """``rates``: ``TOLLGATE_TARGET_RATES`` for this worker (``--rate``)."""
        log = open(stack.state_dir / f"worker-{pipeline}.log", "ab")  # noqa: SIM115, ASYNC230
        env = {**stack_env(stack), **({"TOLLGATE_TARGET_RATES": rates} if rates else {})}
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tollgate.bench.worker", pipeline,
            "--model-latency", str(latency), cwd=CODE_ROOT, env=env,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=log)
        log.close()
        worker = cls(proc)
        if await worker._line(60) != "ready":
            await worker.stop()
            raise RuntimeError(f"the {pipeline} worker did not start; see its log in "
                               f"{stack.state_dir}")
        return worker

    @property
    def pid(self) -> int:
        return self.proc.pid

    async def _line(self, seconds: float) -> str:
        assert self.proc.stdout is not None
        try:
            return (await within(self.proc.stdout.readline(), seconds)).decode().strip()
        except TimeoutError:
            return ""

    async def round_trips(self) -> Counter[str]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"stats\n")
        await self.proc.stdin.drain()
        # The SDK core writes its own warnings to stdout (a failed workflow task, say): skip
        # them, so the answer is the first line that is ours.
        while (line := await self._line(10)) and not line.startswith('{"round_trips"'):
            print(f"bench worker: {line}", file=sys.stderr)
        return Counter(json.loads(line)["round_trips"]) if line else Counter()

    async def stop(self) -> None:
        if self.proc.returncode is None and self.proc.stdin is not None:
            self.proc.stdin.write(b"stop\n")
        try:
            await within(self.proc.wait(), 20)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("pipeline", choices=["tollgate", *PIPELINES])
    parser.add_argument("--model-latency", type=float, default=0.0)
    args = parser.parse_args(argv)
    from tollgate.observability.logs import configure_logging

    configure_logging()
    count_round_trips()
    asyncio.run(serve(args.pipeline, args.model_latency))


if __name__ == "__main__":
    main()
