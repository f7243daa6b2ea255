"""Dead letters' SQL and the writes other stores share with ``OpsStore``'s dead letters.

A dead letter's insert (which reopens a REPLAYED one, ADR 0059), its replay results and its
close live here so that the run's end (``run_close``) and a replay's settling
(``replay_settle``) write them in their own transactions, as ``OpsStore`` does in its own.
"""

from __future__ import annotations

import json
from typing import Any

from asyncpg.pool import PoolConnectionProxy

from adapters.postgres.pgtext import pg_text
from adapters.postgres.steps import recorded_beside
from contracts.actions import ReplaySettle

#: Who the audit row of a dead letter reopened by a second write names when the caller names
#: nobody: only a replayable dead letter is ever REPLAYED (``tollgate.ops.actions``), and the
#: reconciler is what writes one again (its replay stopped again: ``dead_letter_write``).
REOPEN_ACTOR = "reconciler"
#: The reason a reopened dead letter's audit row gives.
REOPEN_REASON = "its replay stopped again without settling the write; approve to replay again"

#: One dead letter ($1-$12 as ``OpsStore.dead_letter`` passes them, $13 who reopens it); a
#: second for the same (workflow id, code), the table's unique key, inserts nothing and leaves
#: an OPEN, APPROVED or CLOSED row as it is. A REPLAYED one goes back to OPEN (ADR 0059,
#: amended): the replay stopped where the first run did, so the write awaits a person again and
#: a fresh approval is needed before another replay (``approvals`` and ``replays`` stay as
#: history), with one ``dlq_reopen`` audit row by $13; $13 NULL leaves it REPLAYED too.
#: ``reopened``: the row was there before this statement (the statement's own reads see the
#: table as it was), so it was updated, not inserted.
_DEAD_LETTER_INSERT = (
    "INSERT INTO dead_letters (workflow_id, tenant_id, event_id, correlation_id,"
    " error_class, error_code, state, owner, replay_plan, redacted_payload, action_key,"
    " replay_input) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10::jsonb,$11,$12::jsonb)"
    " ON CONFLICT (workflow_id, error_code) DO UPDATE SET status = 'OPEN', updated_at = now()"
    " WHERE dead_letters.status = 'REPLAYED' AND $13::text IS NOT NULL"
    " RETURNING id, replays, EXISTS (SELECT 1 FROM dead_letters o"
    " WHERE o.id = dead_letters.id) AS reopened")


def _reopen_audit(rows: str) -> str:
    """The CTE writing one ``dlq_reopen`` audit row per dead letter ``rows`` reopened."""
    return (f"reopen_audit AS (INSERT INTO audit (actor, action, target, detail)"
            f" SELECT $13, 'dlq_reopen', 'dead_letter/' || id, jsonb_build_object("
            f"'reason', '{REOPEN_REASON}'::text, 'dead_letter', id, 'replays', replays)"
            f" FROM {rows} WHERE reopened RETURNING id)")


DEAD_LETTER_SQL = (f"WITH dl AS ({_DEAD_LETTER_INSERT}), {_reopen_audit('dl')}"
                   " SELECT id FROM dl")
#: The same with a step beside it ($1-$14 the step's, then the dead letter's), written only
#: where its numbers hold nothing yet (``recorded_beside``).
DEAD_LETTER_AND_STEP_SQL = recorded_beside(_DEAD_LETTER_INSERT, then=_reopen_audit("side"))

#: One ``dlq_replay_result`` row per (dead letter, replay): migration 0136's unique index
#: decides, so the run's own write, a retry of it and the command's write make one row.
REPLAY_RESULT_SQL = (
    "INSERT INTO audit (actor, action, target, detail) SELECT coalesce($4::text, (SELECT"
    " a.actor FROM audit a WHERE a.action = 'dlq_replay' AND a.target = $1"
    " AND a.detail->>'replay' = $2::int::text ORDER BY a.id DESC LIMIT 1), 'replay'),"
    " 'dlq_replay_result', $1, jsonb_build_object('replay', $2::int, 'result', $3::text)"
    " ON CONFLICT (target, (detail->>'replay')) WHERE action = 'dlq_replay_result'"
    " DO NOTHING RETURNING id")


async def insert_audit(conn: PoolConnectionProxy, actor: str, action: str, target: str,
                 detail: dict[str, Any]) -> None:
    await conn.execute(
        "INSERT INTO audit (actor, action, target, detail) VALUES ($1,$2,$3,$4::jsonb)",
        actor, action, target, json.dumps(detail),
    )


async def close_dead_letter_in(conn: PoolConnectionProxy, dl_id: int, *, actor: str,
                               reason: str, replays: int | None = None,
                               by_hand: bool = False) -> bool:
    """``OpsStore.close_dead_letter`` in the caller's transaction (``conn``): the row's
    ``closed_*`` columns and one ``dlq_close`` audit row, or nothing when it was closed."""
    done = await conn.fetchval(
        "UPDATE dead_letters SET status = 'CLOSED', closed_by = $2, closed_at = now(),"
        " closed_reason = $3, updated_at = now() WHERE id = $1 AND status <> 'CLOSED'"
        " AND ($4::int IS NULL OR replays = $4) RETURNING id",
        dl_id, actor, pg_text(reason), replays)
    if done is not None:
        await insert_audit(conn, actor, "dlq_close", f"dead_letter/{dl_id}",
                     {"reason": reason, **({"by_hand": True} if by_hand else {})})
    return done is not None


async def close_replaced(conn: PoolConnectionProxy, replay: ReplaySettle, workflow_id: str,
                         code: str, *, actor: str) -> None:
    """Close the dead letter ``replay`` replayed, whose run ended with dead letter
    (``workflow_id``, ``code``) instead (its resend refused: ADR 0066), naming that one. Only
    while that replay is its last (``replays`` unchanged) and it is not closed."""
    newer = await conn.fetchval("SELECT id FROM dead_letters WHERE workflow_id = $1"
                                " AND error_code = $2", workflow_id, code)
    if newer is None or newer == replay.dead_letter:
        return
    await close_dead_letter_in(
        conn, replay.dead_letter, actor=actor, replays=replay.number,
        reason=f"replay {replay.number or '?'} {replay.how}: superseded by dead letter {newer} "
        f"({code}), which holds the write now")
