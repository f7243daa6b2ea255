"""Whether a dead letter's last replay may still send: what closing, approving and replaying
it wait for (ADRs 0060, 0066, 0070). ``tollgate.ops.actions`` and
``tollgate.ops.dead_letter_close`` ask it."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any

from temporalio.client import Client

#: A claimed replay whose run Temporal does not know after this long was never started.
START_WINDOW = timedelta(minutes=15)


def replay_workflow_id(row: dict[str, Any], number: int) -> str:
    """The workflow id of replay ``number`` of dead letter ``row`` (a replayable one)."""
    key = json.loads(row["replay_input"])["action"]["action_key"]
    return f"reconcile/{key}/replay-{number}"


async def replay_in_flight(row: dict[str, Any], connect: Callable[[], Awaitable[Client]],
                           now: datetime) -> str | None:
    """Why the last replay of dead letter ``row`` may still send, or None when none can
    (``run_in_flight``). ``connect`` is called only when it was ever replayed: one never
    replayed is closed or approved with PostgreSQL alone."""
    if int(row["replays"]) == 0:
        return None
    return await run_in_flight(row, await connect(), now)


async def run_in_flight(row: dict[str, Any], client: Client, now: datetime) -> str | None:
    """Why the last replay of dead letter ``row`` may still send, or None when none can.

    Closing, approving and replaying it all wait for that replay's end (ADRs 0060, 0066): a
    replay started cannot be called back, and a second one beside it would race it (the first
    to stop would reopen the dead letter while the other still runs). Temporal is asked about
    the run; a claimed replay whose run it does not know is starting (claim and start are
    seconds apart), unless it was claimed longer ago than ``START_WINDOW``: then its command
    died before starting it, and nothing will. A run that ended with a step under way (a
    cancel or terminate during its resend) is in flight until that step's timeout has passed
    (ADR 0070). Temporal not answering raises (exit 3)."""
    from temporalio.client import WorkflowExecutionStatus
    from temporalio.service import RPCError, RPCStatusCode

    number = int(row["replays"])
    if number == 0:
        return None
    run = replay_workflow_id(row, number)
    try:
        found = await client.get_workflow_handle(run).describe()
    except RPCError as exc:
        if exc.status != RPCStatusCode.NOT_FOUND:
            raise
        claimed = now - row["updated_at"]
        if claimed > START_WINDOW:
            return None  # its command died between the claim and the start
        return (f"replay {number} was claimed {int(claimed.total_seconds() // 60)} min ago "
                f"and its run {run} has not started yet; try again once that run ended")
    if found.status == WorkflowExecutionStatus.RUNNING:
        return (f"replay {number} is still running ({run}); try again once it ended "
                f"(tollgate ops state {run})")
    if found.close_time is not None:  # a step it left under way may still send (ADR 0070)
        from tollgate.ops.step_left_running import step_left_running

        left = await step_left_running(client.get_workflow_handle(run), found.close_time, now)
        if left is not None:
            state = found.status.name.lower() if found.status else "closed"
            return (f"replay {number} ended ({state}) with its step {left[0]} under way, "
                    f"which may still reach the target until {left[1]:%H:%M:%S} UTC ({run}); "
                    "try again after that")
    return None
