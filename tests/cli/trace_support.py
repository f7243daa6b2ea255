"""For the tests of `tollgate trace`: the command run on an event."""

from __future__ import annotations

from tollgate.cli.common import run_in_loop
from tollgate.cli.trace import trace
from tollgate.config.settings import Settings


async def run_trace(s: Settings, *argv: str) -> int:
    return await run_in_loop(trace.main(list(argv), standalone_mode=False), s)
