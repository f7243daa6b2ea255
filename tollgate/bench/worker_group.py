"""One pipeline's worker processes as the bench measures them (``WorkerGroup``): started
together, their CPU and round trips summed, their memory the largest of them."""

from __future__ import annotations

import asyncio
from collections import Counter

from tollgate.bench.stats import memory_kb, tree_cpu_ms
from tollgate.bench.worker import WorkerProcess
from tollgate.dev.stack import DevStack


class WorkerGroup:
    """One pipeline's worker processes (several only for Tollgate with ``--workers``): CPU and
    round trips summed over them, memory the largest of them."""

    def __init__(self, processes: list[WorkerProcess]) -> None:
        self.processes = processes

    @classmethod
    async def start(cls, pipeline: str, n: int, latency: float, stack: DevStack,
                    rates: str = "") -> WorkerGroup:
        return cls([await WorkerProcess.start(pipeline, latency, stack, rates)
                    for _ in range(n)])

    def cpu_ms(self) -> float:
        return sum(tree_cpu_ms(w.pid) for w in self.processes)

    def pids(self) -> list[int]:
        return [w.pid for w in self.processes]

    def rss_mb(self, key: str = "rss_kb") -> float:
        return max(memory_kb(w.pid)[key] for w in self.processes) / 1024

    async def round_trips(self) -> Counter[str]:
        total: Counter[str] = Counter()
        for w in self.processes:
            total.update(await w.round_trips())
        return total

    async def stop(self) -> None:
        await asyncio.gather(*(w.stop() for w in self.processes))
