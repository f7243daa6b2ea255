"""The stack a chaos run drives: the stand-in target's declaration and a start on free ports."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tollgate.dev.stack import DevStack
from tollgate.dev.stack_config import Ports, StackError, free_port

#: How long the stand-in declares a write it holds may stay invisible to a lookup, unless the
#: run is given another (``tollgate chaos --lookup-window``). Its slowest lookup fault hides a
#: write for 1.5 s; 30 s leaves a wide margin under restarts, and spares each lost write the
#: runtime's 10-minute default (docs/receipts.md, lookup window).
LOOKUP_WINDOW_S = 30


def targets(lookup_window_s: int = LOOKUP_WINDOW_S) -> str:
    """``TOLLGATE_TARGETS`` for the run's worker: a target that keeps every written POST as its
    own message, declared as such, so the runtime never relies on the target to absorb a
    second send."""
    return json.dumps({"messaging": {"lookup": True, "dedupe": False,
                                     "lookup_window_s": lookup_window_s}})


async def start_stack(state_dir: Path, tries: int = 3, *,
                      lookup_window_s: int = LOOKUP_WINDOW_S) -> DevStack:
    """A stack on free ports. A port picked free can be taken before the server binds it
    (campaign lanes side by side do that): pick others and start again."""
    for _ in range(tries - 1):
        try:
            return await _start_once(state_dir, lookup_window_s)
        except StackError:
            continue
    return await _start_once(state_dir, lookup_window_s)


async def _start_once(state_dir: Path, lookup_window_s: int) -> DevStack:
    stack = DevStack(state_dir=state_dir, ports=Ports(
        temporal=free_port(), ui=free_port(), crm=0, messaging=0),
        extra_env={"TOLLGATE_TARGETS": targets(lookup_window_s)})
    await asyncio.to_thread(stack.start)
    return stack
