"""Kill switches and dead letters in PostgreSQL: what operators steer with.

Both work with PostgreSQL alone, so `tollgate ops` can close a switch while Temporal is down.
Every operator change also writes an audit row in the same transaction. The dead letters'
statements, and the writes other stores make in their own transactions, are in
``dead_letters.py``.
"""

from __future__ import annotations

from typing import Any

import asyncpg

from adapters.postgres.dead_letters import (
    DEAD_LETTER_AND_STEP_SQL,
    DEAD_LETTER_SQL,
    REOPEN_ACTOR,
    REPLAY_RESULT_SQL,
    close_dead_letter_in,
    close_replaced,
    insert_audit,
)
from adapters.postgres.pgtext import pg_json, pg_text, pg_text_or_none
from adapters.postgres.steps import step_args
from contracts import StepRecord
from contracts.actions import ReplaySettle

#: A switch row covers (adapter, tenant) when each column equals the value or is '*'.
_COVERING = "adapter IN ($1, '*') AND tenant_id IN ($2, '*')"


class OpsStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def record_refusal(self, actor: str, action: str, target: str, code: str) -> None:
        """An operator action refused by the authority matrix (policies/authority.py)."""
        async with self.pool.acquire() as conn:
            await insert_audit(conn, actor, f"refused:{action}", target, {"refusal_code": code})

    # --- kill switches --------------------------------------------------------------------

    async def pass_switch(self, adapter: str, tenant_id: str, *,
                          row_seen: bool = False) -> str | None:
        """Ask to let one action through. Returns why not (a closed switch) or None.

        A canary switch lets its remaining count through, one per call, and closes itself when
        the count is used up, until an operator confirms. ``row_seen``: the caller's own read
        (``adapters.postgres.execute``) already found a closed or counting row, so skip the
        fast path's read and go straight to the locked transaction.
        """
        # The common case, no switch row at all, costs one read and no transaction.
        if not row_seen and not await self.pool.fetchval(
            f"SELECT EXISTS (SELECT 1 FROM kill_switches WHERE {_COVERING}"
            " AND (closed OR canary_remaining IS NOT NULL))", adapter, tenant_id,
        ):
            return None
        async with self.pool.acquire() as conn, conn.transaction():
            rows = await conn.fetch(
                f"SELECT adapter, tenant_id, closed, reason, canary_remaining FROM kill_switches"
                f" WHERE {_COVERING} FOR UPDATE", adapter, tenant_id,
            )
            closed = [r for r in rows if r["closed"]]
            if closed:
                return str(closed[0]["reason"])
            for row in rows:
                left = row["canary_remaining"]
                if left is None:
                    continue
                await conn.execute(
                    "UPDATE kill_switches SET canary_remaining = $3, closed = $4,"
                    " reason = CASE WHEN $4 THEN $5 ELSE reason END, changed_at = now()"
                    " WHERE adapter = $1 AND tenant_id = $2",
                    row["adapter"], row["tenant_id"], left - 1, left - 1 <= 0,
                    "canary passed; waiting for an operator to confirm the reopening",
                )
        return None

    async def set_switch(self, *, adapter: str, tenant_id: str, closed: bool, reason: str,
                         actor: str, canary: int | None = None,
                         detail: dict[str, Any] | None = None) -> None:
        """Close, reopen, or reopen as a canary of ``canary`` actions; ``detail`` goes into the
        audit row (a reopen's runbook fields)."""
        async with self.pool.acquire() as conn, conn.transaction():
            await conn.execute(
                "INSERT INTO kill_switches (adapter, tenant_id, closed, reason, changed_by,"
                " canary_remaining) VALUES ($1,$2,$3,$4,$5,$6)"
                " ON CONFLICT (adapter, tenant_id) DO UPDATE SET closed = $3, reason = $4,"
                " changed_by = $5, canary_remaining = $6, changed_at = now()",
                adapter, tenant_id, closed, reason, actor, canary,
            )
            action = "kill" if closed else ("reopen_canary" if canary else "reopen")
            await insert_audit(conn, actor, action, f"{adapter}/{tenant_id}",
                         {"reason": reason, "canary": canary, **(detail or {})})

    async def switches(self, tenant: str | None = None) -> list[dict[str, Any]]:
        """Every switch row, or those covering ``tenant`` (its own and the '*' ones)."""
        rows = await self.pool.fetch(
            "SELECT * FROM kill_switches WHERE $1::text IS NULL OR tenant_id IN ($1, '*')"
            " ORDER BY adapter, tenant_id", tenant)
        return [dict(r) for r in rows]

    # --- dead letters ---------------------------------------------------------------------

    async def dead_letter(
        self,
        *,
        workflow_id: str,
        error_class: str,
        error_code: str,
        state: str,
        owner: str,
        replay_plan: str,
        redacted_payload: dict[str, Any] | None,
        tenant_id: str | None,
        event_id: str | None,
        correlation_id: str | None,
        action_key: str | None = None,
        replay_input: dict[str, Any] | None = None,
        step: StepRecord | None = None,
        actor: str = REOPEN_ACTOR,
        replaces: ReplaySettle | None = None,
    ) -> None:
        """``step``: transitions recorded in the same statement, each only if its number holds
        nothing yet (the send step's EXECUTING, ``DeadLetterActivities``). ``actor``: who the
        audit row names if this reopens a REPLAYED dead letter (``DEAD_LETTER_SQL``).
        ``replaces``: the replay whose end this dead letter is, under another code (its resend
        refused): the replayed dead letter is closed in the same transaction, naming this one
        (ADR 0066), so the write has one dead letter in the queue."""
        args = (pg_text(workflow_id), pg_text_or_none(tenant_id), pg_text_or_none(event_id),
                pg_text_or_none(correlation_id), error_class, error_code, state, owner,
                pg_text(replay_plan), pg_json(redacted_payload or None), action_key,
                pg_json(replay_input or None), actor)
        if replaces is not None:
            async with self.pool.acquire() as conn, conn.transaction():
                await conn.execute(DEAD_LETTER_SQL, *args)
                await close_replaced(conn, replaces, args[0], error_code, actor=actor)
        elif step is None:
            await self.pool.execute(DEAD_LETTER_SQL, *args)
        else:
            await self.pool.fetchval(DEAD_LETTER_AND_STEP_SQL, *step_args(step), *args)

    async def dead_letters(self, status: str | None = None,
                           tenant: str | None = None) -> list[dict[str, Any]]:
        rows = await self.pool.fetch(
            "SELECT id, workflow_id, tenant_id, event_id, correlation_id, error_class,"
            " error_code, state, owner, status, approvals, replays, created_at FROM dead_letters"
            " WHERE ($1::text IS NULL OR status = $1) AND ($2::text IS NULL OR tenant_id = $2)"
            " ORDER BY id", status, tenant,
        )
        return [dict(r) for r in rows]

    async def dead_letter_row(self, dl_id: int) -> dict[str, Any] | None:
        row = await self.pool.fetchrow("SELECT * FROM dead_letters WHERE id = $1", dl_id)
        return dict(row) if row else None

    async def approve_dead_letter(self, dl_id: int, *, actor: str, reason: str,
                                  replays: int | None = None) -> bool:
        """Allow one more replay. False when there is no such open or approved dead letter,
        or (``replays``: the count the caller judged it by) a replay was claimed since."""
        async with self.pool.acquire() as conn, conn.transaction():
            done = await conn.fetchval(
                "UPDATE dead_letters SET status = 'APPROVED', approvals = approvals + 1,"
                " approved_by = $2, updated_at = now()"
                " WHERE id = $1 AND status IN ('OPEN', 'APPROVED', 'REPLAYED')"
                " AND ($3::int IS NULL OR replays = $3) RETURNING id",
                dl_id, actor, replays,
            )
            if done is not None:
                await insert_audit(conn, actor, "dlq_approve", f"dead_letter/{dl_id}",
                             {"reason": reason})
        return done is not None

    async def claim_replay(self, dl_id: int, *, actor: str,
                           replays: int | None = None) -> int | None:
        """Use one approval: returns the replay number, or None when no approval is unused or
        (``replays``: the count the caller judged the last replay's end by) one was claimed
        since, so two replays never run side by side (ADR 0066)."""
        async with self.pool.acquire() as conn, conn.transaction():
            number = await conn.fetchval(
                "UPDATE dead_letters SET replays = replays + 1, status = 'REPLAYED',"
                " updated_at = now() WHERE id = $1 AND replays < approvals"
                " AND status <> 'CLOSED' AND ($2::int IS NULL OR replays = $2) RETURNING replays",
                dl_id, replays,
            )
            if number is not None:
                await insert_audit(conn, actor, "dlq_replay", f"dead_letter/{dl_id}",
                             {"replay": number})
        return int(number) if number is not None else None

    async def replay_started(self, dl_id: int, workflow_id: str) -> None:
        """The run of its latest replay, before it starts: ``ops dlq show`` and ``trace``
        name (and link) it while it runs, which may be the target's whole lookup window."""
        await self.pool.execute("UPDATE dead_letters SET replayed_workflow_id = $2 WHERE id = $1",
                                dl_id, workflow_id)

    async def record_replay_result(self, dl_id: int, *, actor: str | None, replay: int,
                                   result: str) -> bool:
        """How replay ``replay`` of a dead letter ended (the reconciler's status), for the
        ``tollgate_dlq_replays_total`` metric, the audit trail and migration 0135. Written by
        the replay's run as it ends (ADR 0069); once per replay, a repeat writes nothing (False).
        ``actor`` None: who claimed that replay (its ``dlq_replay`` row), else ``replay``."""
        return await self.pool.fetchval(REPLAY_RESULT_SQL, f"dead_letter/{dl_id}", replay,
                                        result, actor) is not None

    async def close_dead_letter(self, dl_id: int, *, actor: str, reason: str,
                                replays: int | None = None, by_hand: bool = False) -> bool:
        """Close it for good, with who, when and why on the row and in the audit. False when
        it was already closed, or (``replays``: the count the caller judged it by) a replay
        was claimed since: a close and a claim each change the row only as the other left it.
        ``by_hand``: an operator's ``ops dlq close``, not a replay that found the receipt
        SUCCEEDED (the replay metric counts only those, whatever the operator's reason says).
        """
        async with self.pool.acquire() as conn, conn.transaction():
            return await close_dead_letter_in(conn, dl_id, actor=actor, reason=reason,
                                              replays=replays, by_hand=by_hand)
