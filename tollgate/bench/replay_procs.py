"""Replay spread over one process per core: the SDK replays a history on one Python thread, so
one process can use one core at most. Each child gets a share of the histories, builds its own
``Replayer`` (one per stream, reused across every history of that stream), replays one history
untimed to warm its imports and sandbox, waits for the others at a barrier, then replays its
share. Wall time runs from the first child past the barrier to the last one done; CPU is the
children's own over that part only.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import queue
import time
from typing import Any

from temporalio.api.history.v1 import History
from temporalio.client import WorkflowHistory

from tollgate.bench.replay_codec import codec_spent, timed_converter
from tollgate.bench.replay_decode import plain_converter
from tollgate.bench.replay_streams import REPLAY_STREAMS, RUNNERS, replay_streams
from tollgate.codec.keyring import KeyRing
from tollgate.runtime.exits import Exit, Failure

#: A child that does not reach the barrier or report by then is a failed measurement.
CHILD_TIMEOUT_S = 600


def processes_per_core() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
        (os.cpu_count() or 1)


def _child(share: list[tuple[str, bytes]], keys: KeyRing | None, sandbox: str, streams: int,
           barrier: Any, out: Any) -> None:

    converter = timed_converter(keys) if keys is not None else plain_converter()
    histories = [WorkflowHistory(wf_id, History.FromString(raw).events) for wf_id, raw in share]
    asyncio.run(replay_streams(histories[:1], converter, RUNNERS[sandbox]))  # warm-up
    barrier.wait(CHILD_TIMEOUT_S)
    started, cpu, in_codec = time.time(), time.process_time(), codec_spent()[0]
    failures = asyncio.run(replay_streams(histories, converter, RUNNERS[sandbox], streams))
    out.put({"started": started, "ended": time.time(), "failures": failures,
             "cpu_s": time.process_time() - cpu, "codec_s": codec_spent()[0] - in_codec,
             "histories": len(histories)})


def replay_in_processes(histories: list[WorkflowHistory], keys: KeyRing | None, sandbox: str,
                        processes: int, streams: int = REPLAY_STREAMS) -> dict[str, Any]:
    """Replays ``histories`` over ``processes`` children (``keys`` None: the histories were
    decoded up front and replay without the codec); the same figures as ``replay_speed``."""
    if not histories:
        return {"histories": 0, "per_s": None, "cpu_ms_per_history": None, "failures": 0}
    processes = max(1, min(processes, len(histories)))
    context = multiprocessing.get_context("spawn")  # never fork a process with SDK threads
    barrier, out = context.Barrier(processes), context.Queue()
    raw = [(h.workflow_id, History(events=h.events).SerializeToString()) for h in histories]
    children = [context.Process(target=_child, args=(raw[i::processes], keys, sandbox,
                                                     streams, barrier, out), daemon=True)
                for i in range(processes)]
    for child in children:
        child.start()
    try:
        found = [out.get(timeout=CHILD_TIMEOUT_S) for _ in children]
    except queue.Empty:
        raise Failure(Exit.INTERNAL, "a replay process did not report in time") from None
    finally:
        for child in children:
            child.join(timeout=10)
            if child.is_alive():
                child.terminate()
    wall = max(f["ended"] for f in found) - min(f["started"] for f in found)
    return {"histories": len(histories), "per_s": round(len(histories) / wall, 1),
            "cpu_ms_per_history": round(sum(f["cpu_s"] for f in found) * 1000
                                        / len(histories), 2),
            # Fewer than the processes: other work on the machine had the rest of the cores.
            "cores_used": round(sum(f["cpu_s"] for f in found) / wall, 2),
            "codec_cpu_ms_per_history": round(sum(f["codec_s"] for f in found) * 1000
                                              / len(histories), 2) if keys else None,
            "failures": sum(f["failures"] for f in found), "processes": processes,
            "streams": streams}
