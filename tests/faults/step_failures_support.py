"""For the step failure tests: a run dead-lettered from EXECUTING."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import asyncpg
from temporalio.client import WorkflowHandle

from contracts import EventState
from tests.faults.rollout_support import TRANSITIONS_SQL, ended_after_executing

#: ``pool.fetch`` or ``Rig.sql``.
Fetch = Callable[..., Awaitable[Sequence[asyncpg.Record]]]


async def dead_lettered_from_executing(fetch: Fetch, handle: WorkflowHandle[Any, Any],
                                       code: str) -> None:
    """The event ends as the workflow says (query, search attribute, PostgreSQL row), its
    transitions numbered 1..n, each from the state the one before entered: APPROVED ->
    EXECUTING (the send step's, written with its dead letter when it failed before its
    receipt) -> DEAD_LETTERED, as the run counts them."""
    rows = await fetch(TRANSITIONS_SQL, handle.id)
    ended_after_executing(list(rows), "DEAD_LETTERED")
    [event] = await fetch("SELECT state, reason_code, last_seq, outcome->>'state' AS ended"
                          " FROM events WHERE workflow_id = $1", handle.id)
    assert tuple(event) == ("DEAD_LETTERED", code, len(rows), "DEAD_LETTERED")
    assert await handle.query("state") == EventState.DEAD_LETTERED
    shown = (await handle.describe()).search_attributes.get("TollgateState")
    assert shown == ["DEAD_LETTERED"]
