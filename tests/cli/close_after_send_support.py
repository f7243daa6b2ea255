"""For the tests of `tollgate ops close` after a send started: the send's key, an approval, and
what the close left."""

from __future__ import annotations

import asyncpg

from contracts.review import ReviewDecision
from policies.keys import action_key
from tests.conftest import Handle, wait_review

REASON = "terminated by hand in incident 14"


def send_key(key: str) -> str:
    return action_key("acme", f"evt-{key}", "messaging", "send_message")


async def approve(handle: Handle) -> None:
    ticket = await wait_review(handle)
    await handle.execute_update("review", ReviewDecision(
        request_id=ticket["request_id"], decision="approve", reviewer="an.tran",
        role="care_lead", reason="ok", draft_version=ticket["draft_version"]))


async def end_of(db: asyncpg.Connection, wid: str) -> tuple[object, ...]:
    """The row's state and reason code, its last transition, and its run_close audit rows."""
    row = await db.fetchrow("SELECT state, reason_code FROM events WHERE workflow_id = $1", wid)
    last = await db.fetchrow("SELECT from_state, to_state, actor, reason FROM state_transitions"
                             " WHERE workflow_id = $1 ORDER BY seq DESC LIMIT 1", wid)
    audits = await db.fetchval("SELECT count(*) FROM audit WHERE action = 'run_close'"
                               " AND target = $1", wid)
    assert row is not None and last is not None
    return (*row, tuple(last), audits)
