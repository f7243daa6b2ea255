"""The end PostgreSQL recorded for an event: its events row's outcome.

The intake's answer to a repeat of an event whose run has closed comes from that run's result;
this is the record it is checked against, since an end can be recorded after the run completed
(a dead letter's replay that settled the write, ADR 0061 and ADR 0062).
"""

from __future__ import annotations

import asyncpg

from contracts import FinalOutcome

_END_SQL = "SELECT outcome FROM events WHERE workflow_id = $1 AND outcome IS NOT NULL"


async def recorded_end(pool: asyncpg.Pool, workflow_id: str) -> FinalOutcome | None:
    """The outcome recorded for ``workflow_id``, or None when it has no row or no end yet."""
    found = await pool.fetchval(_END_SQL, workflow_id)
    return None if found is None else FinalOutcome.model_validate_json(found)
