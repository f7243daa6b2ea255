"""``tollgate bench --py-spy DIR``: py-spy on the Tollgate worker(s) over each phase's measured
rounds, and the share of the worker's Python CPU each mechanism took.

``py-spy record --gil`` keeps only samples where a thread holds the GIL (Python's own CPU; the
SDK's Rust threads are not sampled). A sample is charged to the innermost frame that belongs
to a mechanism of ``MECHANISMS``; pydantic and asyncio frames are charged to whatever called
them, and the ``OUTER`` mechanisms to themselves wherever they sit on the stack (they call
into the others). py-spy comes from pip and is not a project dependency (ADR 0047).
"""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

RATE_HZ = 100
#: (mechanism, pattern over one frame as py-spy writes it: "function (path:line)").
MECHANISMS: tuple[tuple[str, str], ...] = (
    ("codec", r"tollgate/codec/|\(cryptography/"),
    ("HMAC and tokens", r"policies/signing|\(hmac\.py|\(hashlib|action_token"),
    ("validator", r"policies/(draft_validator|injection_rules|sensitive|normalise|edge_text)"
                  r"|confusable"),
    ("logging", r"\((structlog|logging)/|tollgate/observability/logs"),
    ("tracing", r"opentelemetry|tollgate/observability/tracing"),
    ("metrics", r"tollgate/observability/metric|prometheus_client"),
    ("payload visitor (SDK)", r"temporalio/bridge/_visitor|_command_aware_visitor"),
    ("data converter", r"temporalio/converter/|temporalio/contrib/pydantic"),
    ("PostgreSQL client", r"\(asyncpg/|adapters/postgres/"),
    ("HTTP to targets", r"\((httpx|httpcore|anyio|h11)/|adapters/http/"),
    ("workflow code", r"\(workflows/|\(policies/"),
    ("sandbox and workflow instance (SDK)",
     r"temporalio/worker/workflow_sandbox|temporalio/worker/_workflow_instance"),
    ("interceptor", r"activities/interceptor"),
    ("activities", r"\(activities/|\(adapters/"),
    ("activity worker (SDK)", r"temporalio/worker/_activity"),
    ("workflow worker (SDK)", r"temporalio/worker/_workflow\.py"),
    ("bridge to the Rust core (SDK)", r"temporalio/bridge/"),
)
#: Charged to themselves wherever they sit: each was a lever of issue 33, kept visible.
OUTER: tuple[tuple[str, str], ...] = (
    ("converter clones (with_context)", r"DataConverter\.with_context"),
    ("draft JSON schema", r"draft_json_schema"),
)
_TRANSPARENT = re.compile(r"\((pydantic|pydantic_core|asyncio|concurrent)/|selectors\.py|"
                          r"threading\.py")


def charge(stack: str) -> str:
    """The mechanism one py-spy stack (frames joined by ';', outermost first) belongs to."""
    for name, pattern in OUTER:
        if re.search(pattern, stack):
            return name
    fallback = "other"
    for frame in reversed(stack.split(";")):
        if _TRANSPARENT.search(frame):
            fallback = "pydantic models" if "pydantic" in frame else "event loop and threads"
            continue
        for name, pattern in MECHANISMS:
            if re.search(pattern, frame):
                return name
    return fallback


def shares(lines: Iterable[str]) -> dict[str, Any]:
    """From py-spy's raw output (``stack count`` per line): samples, and % per mechanism."""
    found: Counter[str] = Counter()
    for line in lines:
        stack, _, count = line.rstrip().rpartition(" ")
        if stack and count.isdigit():
            found[charge(stack)] += int(count)
    total = sum(found.values())
    return {"samples": total, "percent": {k: round(100 * v / total, 1)
                                          for k, v in found.most_common()} if total else {}}


def binary() -> str | None:
    beside = Path(sys.executable).parent / "py-spy"
    return str(beside) if beside.exists() else shutil.which("py-spy")


class Recorder:
    """py-spy on the given processes until ``stop``; the raw files land in ``folder``."""

    def __init__(self, folder: Path, phase: str, pids: list[int]) -> None:
        exe = binary()
        if exe is None:
            raise RuntimeError("py-spy is not installed (pip install py-spy)")
        folder.mkdir(parents=True, exist_ok=True)
        self.files = [folder / f"{phase}-worker-{pid}.txt" for pid in pids]
        self.procs = [subprocess.Popen(  # noqa: S603 - our own binary, our own child's pid
            [exe, "record", "--pid", str(pid), "--rate", str(RATE_HZ), "--format", "raw",
             "--gil", "--nonblocking", "--output", str(out)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for pid, out in zip(pids, self.files, strict=True)]

    def stop(self) -> dict[str, Any]:
        for proc in self.procs:
            proc.send_signal(signal.SIGINT)  # py-spy writes its file on SIGINT
        for proc in self.procs:
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
        lines = [line for f in self.files if f.exists() for line in f.read_text().splitlines()]
        return {**shares(lines), "files": [str(f) for f in self.files]}
