"""Closing a dead letter by hand (`tollgate ops dlq close`, ADR 0060): a person takes a write
nobody will replay off the books (the target refused it for good, the operator settled it at
the target by hand, the customer was called instead).

Closed is final: approve and replay refuse it, and its write, left unknown (no "not sent" state
is invented), is moved aside for good (``MOVED_ASIDE_SQL``): not an open unknown write on
``ops status``, never looked up by the sweep again, counted there as closed by hand.

A replay already started cannot be called back by a close, and a resend after a person settled
the write by hand would be the duplicate the close exists to prevent. So a dead letter whose
last replay may still be running is refused: Temporal is asked about that replay's run, and
closing waits for its end (``tollgate.ops.replay_in_flight``, which approve and replay ask
too).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import asyncpg
from temporalio.client import Client

from adapters.postgres.ops import OpsStore
from tollgate.ops.replay_in_flight import replay_in_flight
from tollgate.runtime.exits import Exit, Failure


def already_closed(row: dict[str, Any]) -> str:
    """The one line for a dead letter closed before (exit 0: what was asked holds)."""
    by = f" by {row['closed_by']}" if row.get("closed_by") else ""
    at = f" at {row['closed_at']:%Y-%m-%d %H:%M:%S} UTC" if row.get("closed_at") else ""
    return f"dead letter {row['id']}: already closed{by}{at}: nothing to do"


async def close_dead_letter(pool: asyncpg.Pool, row: dict[str, Any], operator: str,
                            reason: str, connect: Callable[[], Awaitable[Client]]
                            ) -> tuple[Exit, str]:
    """Close ``row`` for good as ``operator``; the exit code and the line to print. Raises
    ``Failure`` (exit 1) while a replay of it may still send."""
    dl_id = int(row["id"])
    if row["status"] == "CLOSED":
        return Exit.OK, already_closed(row)
    running = await replay_in_flight(row, connect, datetime.now(UTC))
    if running:
        raise Failure(Exit.REFUSED, f"dead letter {dl_id}: not closed: {running}")
    ops = OpsStore(pool)
    if not await ops.close_dead_letter(dl_id, actor=operator, reason=reason,
                                       replays=int(row["replays"]), by_hand=True):
        now = await ops.dead_letter_row(dl_id)
        if now is not None and now["status"] == "CLOSED":
            return Exit.OK, already_closed(now)
        raise Failure(Exit.REFUSED, f"dead letter {dl_id}: not closed: a replay of it was "
                      "claimed meanwhile; close it once that replay ended")
    return Exit.OK, (f"dead letter {dl_id} closed: it is never replayed, and its write, if "
                     "any, stays unknown, off the books; audited")
