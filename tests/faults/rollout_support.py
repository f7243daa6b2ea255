"""For the fault tests that read an event's transitions: the query, and the runs ended or stopped
after EXECUTING."""

from __future__ import annotations

from itertools import pairwise

import asyncpg

TRANSITIONS_SQL = ("SELECT seq, from_state, to_state FROM state_transitions"
                   " WHERE workflow_id = $1 ORDER BY seq")


def ended_after_executing(records: list[asyncpg.Record], final: str) -> None:
    """Transitions numbered 1..n, each from the state the one before entered, ending
    APPROVED -> EXECUTING -> ``final``: a send that ended at the send step, as the run counts
    it."""
    rows = [tuple(r) for r in records]
    assert [r[0] for r in rows] == list(range(1, len(rows) + 1)), rows
    assert all(b[1] == a[2] for a, b in pairwise(rows)), rows
    assert [r[1:] for r in rows[-2:]] == [("APPROVED", "EXECUTING"), ("EXECUTING", final)], rows


def stopped_after_executing(records: list[asyncpg.Record]) -> None:
    """A send stopped at the send step (``ended_after_executing``)."""
    ended_after_executing(records, "STOPPED")
