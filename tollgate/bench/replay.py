"""``tollgate bench --replay``: how fast the current workflow code replays histories, as a
worker does after an eviction or a restart, and as ``tests/replay`` does before a release.

Two sets: the committed histories (``tests/replay/histories``, sealed with the committed test
key ring; replayed several times over, since there are few) and up to ``RUN_HISTORIES``
``ProcessEvent`` histories the run itself recorded (sealed with the stack's own ring). Each set
is replayed the ways ``VARIANTS`` lists: the SDK's default sandbox or the worker's own
(workflow modules passed through, ``tollgate.runtime.workers``), with the payload codec or
on histories decoded once up front (``replay_decode``), in this process or one process per core
(``replay_procs``). Nothing else of the bench runs then.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from temporalio.client import Client, WorkflowHistory
from temporalio.converter import DataConverter
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

from tollgate.bench.replay_codec import TimedCodec, codec_spent, timed_converter
from tollgate.bench.replay_decode import decoded_history, without_codec
from tollgate.bench.replay_procs import processes_per_core, replay_in_processes
from tollgate.bench.replay_streams import REPLAY_STREAMS, RUNNERS, replay_streams
from tollgate.codec.keyring import KeyRing, load_key_ring
from tollgate.codec.payload import EncryptionCodec
from tollgate.config.service import CodecSettings

#: Six variants each: 300 keep the replay part of the bench near a minute per set.
RUN_HISTORIES = 300
#: Replays of the committed set at least (passes over it, rounded up).
COMMITTED_REPLAYS = 200
_TESTS = Path(__file__).resolve().parents[2] / "tests"
COMMITTED = _TESTS / "replay" / "histories"
TEST_KEYS_FILE = _TESTS / "fixtures" / "test_keys.json"


def committed_histories() -> list[WorkflowHistory]:
    """The committed histories, or none when this install has no ``tests/`` beside it."""
    return [WorkflowHistory.from_json(p.stem, p.read_text())
            for p in sorted(COMMITTED.glob("*.json"))]


async def run_histories(client: Client, limit: int = RUN_HISTORIES) -> list[WorkflowHistory]:
    """Up to ``limit`` finished ProcessEvent histories of this run, fetched 20 at a time."""
    ids = []
    async for wf in client.list_workflows(
            "WorkflowType = 'ProcessEvent' AND ExecutionStatus = 'Completed'", limit=limit):
        ids.append((wf.id, wf.run_id))
    found: list[WorkflowHistory] = []
    for at in range(0, len(ids), 20):
        found += await asyncio.gather(*(client.get_workflow_handle(i, run_id=r).fetch_history()
                                        for i, r in ids[at:at + 20]))
    return found


async def replay_speed(histories: list[WorkflowHistory], converter: DataConverter,
                       runner: SandboxedWorkflowRunner) -> dict[str, Any]:
    """Replays every history once in this process; histories/s by wall time and CPU."""
    if not histories:
        return {"histories": 0, "per_s": None, "cpu_ms_per_history": None, "failures": 0}
    in_codec = codec_spent()[0]
    wall, cpu = time.perf_counter(), time.process_time()
    failures = await replay_streams(histories, converter, runner)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    in_codec = codec_spent()[0] - in_codec
    return {"histories": len(histories), "per_s": round(len(histories) / wall, 1),
            "cpu_ms_per_history": round(cpu * 1000 / len(histories), 2),
            "cores_used": round(cpu / wall, 2),
            "codec_cpu_ms_per_history": round(in_codec * 1000 / len(histories), 2)
            if isinstance(converter.payload_codec, TimedCodec) else None,
            "failures": failures, "streams": REPLAY_STREAMS, "processes": 1}


#: (label, sandbox, with the codec, a process per core): the codec's share is the difference
#: between a pair that differs only in the codec; the processes' gain between 1 and per core.
VARIANTS = (
    ("default sandbox", "default sandbox", True, False),
    ("worker sandbox", "worker sandbox", True, False),
    ("worker sandbox, no codec", "worker sandbox", False, False),
    ("default sandbox, per core", "default sandbox", True, True),
    ("worker sandbox, per core", "worker sandbox", True, True),
    ("worker sandbox, no codec, per core", "worker sandbox", False, True),
)


async def replay_set(histories: list[WorkflowHistory], keys: KeyRing) -> dict[str, Any]:
    """One set of histories under every variant, and what decoding it once up front cost."""
    wall = time.perf_counter()
    decoded = [decoded_history(h, EncryptionCodec(keys)) for h in histories]
    decode_ms = (time.perf_counter() - wall) * 1000 / max(len(histories), 1)
    converter = timed_converter(keys)
    found: dict[str, Any] = {}
    for label, sandbox, codec, per_core in VARIANTS:
        chosen = histories if codec else decoded
        if per_core:
            figures = await asyncio.to_thread(replay_in_processes, chosen,
                                              keys if codec else None, sandbox,
                                              processes_per_core())
        else:
            figures = await replay_speed(chosen, converter if codec else without_codec(converter),
                                         RUNNERS[sandbox])
        found[label] = {**figures, "codec": codec}
    return {"variants": found, "decode_ms_per_history": round(decode_ms, 2),
            "codec_share": codec_share(found)}


def codec_share(variants: dict[str, Any]) -> dict[str, Any]:
    """What the codec costs a replay, per variant with the codec that has a twin without it:
    the CPU inside the codec per history (``replay_codec``: steady on a shared machine), and
    beside it the two variants' CPU per history and their difference (which also holds
    whatever else a codec makes the SDK do, and the noise of two runs)."""
    shares = {}
    for label, clear in variants.items():
        sealed = variants.get(label.replace(", no codec", ""))
        if clear["codec"] or sealed is None or sealed is clear:
            continue
        with_ms, without_ms = sealed["cpu_ms_per_history"], clear["cpu_ms_per_history"]
        in_codec = sealed.get("codec_cpu_ms_per_history")
        if with_ms is None or without_ms is None or in_codec is None:
            continue
        shares[label.replace(", no codec", "")] = {
            "codec_cpu_ms": in_codec, "with_ms": with_ms, "without_ms": without_ms,
            "codec_pct": round(100 * in_codec / with_ms, 1) if with_ms else None,
            "difference_ms": round(with_ms - without_ms, 2)}
    return shares


def best(variants: dict[str, Any]) -> dict[str, Any]:
    """The fastest variant with the codec, and the same variant without it (the worker
    sandbox's, for the default sandbox has no codec-free run)."""
    with_codec = [(f["per_s"] or 0, label) for label, f in variants.items() if f["codec"]]
    if not with_codec:
        return {}
    _, label = max(with_codec)
    twin = label.replace("default", "worker").replace("sandbox", "sandbox, no codec", 1)
    return {"with_codec": {**variants[label], "label": label},
            "without_codec": {**variants[twin], "label": twin} if twin in variants else None}


async def replay_report(recorded: list[WorkflowHistory], run_keys: KeyRing) -> dict[str, Any]:
    """Both sets under every variant: ``{set: {"variants": {label: figures}, ...}}``; the goal
    is judged on the committed set (``best``)."""
    committed = committed_histories()
    passes = -(-COMMITTED_REPLAYS // len(committed)) if committed else 0
    report: dict[str, Any] = {"committed_files": len(committed), "committed_passes": passes,
                              "processes_per_core": processes_per_core()}
    if committed:
        test_keys = load_key_ring(CodecSettings.from_env({"TOLLGATE_KEYS_FILE":
                                                          str(TEST_KEYS_FILE)}))
        report["committed"] = await replay_set(committed * passes, test_keys)
        report["best"] = best(report["committed"]["variants"])
    if recorded:
        report["run"] = await replay_set(recorded, run_keys)
    return report


def main(json_path: str | None = None) -> None:
    """``python -m tollgate.bench.replay [FILE.json]``: the committed set only, no stack (about
    a minute); the report's replay part, and the figures as JSON in ``FILE.json`` if named."""
    from tollgate.bench.render import replay_lines

    report = asyncio.run(replay_report([], load_key_ring(CodecSettings.from_env(
        {"TOLLGATE_KEYS_FILE": str(TEST_KEYS_FILE)}))))
    print("\n".join(replay_lines(report)).strip("\n"))
    if json_path:
        Path(json_path).write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main(*sys.argv[1:2])
