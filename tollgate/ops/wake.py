"""Wake the runs a kill switch or a review backlog held (docs/runbook.md, "How long a run may
wait"). Whatever releases a hold calls ``wake_held`` with its wake-up key; the runs it held list
that key in the search attribute TollgateHeldBy. Best effort by design: a run whose signal is
lost (Temporal down, visibility behind) looks again on its own fallback timer."""

from __future__ import annotations

from temporalio.client import Client
from temporalio.service import RPCError

from contracts.actions import WakeUp
from contracts.search_attributes import HELD_BY

#: Enough for any real incident; past it the fallback timers release the rest.
WAKE_LIMIT = 10_000


async def wake_held(client: Client, key: str) -> int:
    """Signal ``wake`` to every running run held by ``key``; returns how many were signalled.
    A run that ended meanwhile is skipped."""
    query = f"{HELD_BY} = '{_quoted(key)}' AND ExecutionStatus = 'Running'"
    woken = 0
    async for execution in client.list_workflows(query, limit=WAKE_LIMIT):
        handle = client.get_workflow_handle(execution.id)  # the current run, continued or not
        try:
            await handle.signal("wake", WakeUp(cause=key))
        except RPCError:
            continue  # finished or continued as new since the listing: nothing to wake
        woken += 1
    return woken


def _quoted(value: str) -> str:
    return value.replace("\\", "\\\\").replace("'", "\\'")
