"""The stack a chaos run drives: the stand-in target's declaration and a start on free ports."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tollgate.dev.stack import DevStack
from tollgate.dev.stack_config import Ports, StackError, free_port

#: How long the stand-in declares a write it holds may stay invisible to a lookup. Its slowest
#: lookup fault hides a write for 1.5 s; 30 s leaves a wide margin under restarts, and spares
#: each lost write the runtime's 10-minute default (docs/receipts.md, lookup window).
LOOKUP_WINDOW_S = 30
#: A target that keeps every written POST as its own message, declared as such, so the
#: runtime never relies on the target to absorb a second send.
TARGETS = json.dumps({"messaging": {"lookup": True, "dedupe": False,
                                    "lookup_window_s": LOOKUP_WINDOW_S}})


async def start_stack(state_dir: Path, tries: int = 3) -> DevStack:
    """A stack on free ports. A port picked free can be taken before the server binds it
    (campaign lanes side by side do that): pick others and start again."""
    for _ in range(tries - 1):
        try:
            return await _start_once(state_dir)
        except StackError:
            continue
    return await _start_once(state_dir)


async def _start_once(state_dir: Path) -> DevStack:
    stack = DevStack(state_dir=state_dir, ports=Ports(
        temporal=free_port(), ui=free_port(), crm=0, messaging=0),
        extra_env={"TOLLGATE_TARGETS": TARGETS})
    await asyncio.to_thread(stack.start)
    return stack
