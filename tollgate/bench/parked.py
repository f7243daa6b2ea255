"""Parked events (``--parked``): Tollgate events nobody will decide, submitted before a phase's
rounds so that its rounds run beside that many workflows waiting for review. They belong to
another tenant, so the scripted reviewer's list never pages through them."""

from __future__ import annotations

import asyncio
import time

from temporalio.client import Client

from contracts import EventState
from tollgate.intake.submit import submit
from tollgate.runtime.exits import Exit, Failure

PARKED_TENANT = "globex"


async def park(client: Client, task_queue: str, events: list[tuple[str, str]],
               concurrency: int, wait_s: float) -> None:
    """Submit ``events`` (made for ``PARKED_TENANT``) and wait until all of them wait for
    review; a ``Failure`` when they have not within ``wait_s`` seconds."""
    gate = asyncio.Semaphore(concurrency)

    async def one(raw: str) -> None:
        async with gate:
            await submit(client, raw, task_queue=task_queue)

    await asyncio.gather(*(one(raw) for _, raw in events))
    query = (f"WorkflowType = 'ProcessEvent' AND TollgateTenant = '{PARKED_TENANT}' AND "
             f"TollgateState = '{EventState.AWAITING_REVIEW.value}'")
    deadline = time.perf_counter() + wait_s
    while (waiting := (await client.count_workflows(query)).count) < len(events):
        if time.perf_counter() > deadline:
            raise Failure(Exit.REFUSED, f"only {waiting} of {len(events)} parked events "
                          "reached review in time; see the worker log (--keep)")
        await asyncio.sleep(1)
