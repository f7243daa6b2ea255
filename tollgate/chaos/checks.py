"""The invariants `tollgate chaos` checks after its run (docs/reliability.md)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import asyncpg

from contracts import TERMINAL_STATES, EventState, FinalOutcome
from tollgate.chaos.schedule import Plan
from tollgate.dev.standins import StandIns


async def check_invariants(
    plan: Plan, outcomes: dict[str, FinalOutcome | str], standins: StandIns, database_url: str,
    logs: list[Path],
) -> dict[str, list[str]]:
    """Each invariant's violations (empty lists: it held). ``outcomes``: every workflow id
    an accepted delivery named, with its final outcome or the error that kept it from one."""
    found: dict[str, list[str]] = {}
    # The target runs without dedupe: every POST that wrote is a message of its own, so a
    # second write for a key shows as a second message here.
    messages = standins.messaging.messages()
    per_key = Counter(m["idempotency_key"] for m in messages)
    found["at_most_one_message_per_action_key"] = [
        f"{key}: {n} messages" for key, n in per_key.items() if n > 1]

    lost = [f"{wf}: {out}" for wf, out in outcomes.items() if isinstance(out, str)]
    found["no_event_lost"] = lost
    conn = await asyncpg.connect(database_url)
    try:
        rows = {r["workflow_id"]: r["state"] for r in await conn.fetch(
            "SELECT workflow_id, state FROM events WHERE workflow_id = ANY($1::text[])",
            list(outcomes))}
        receipts = await conn.fetch("SELECT action_key, status FROM receipts")
        dead = {r["action_key"] for r in await conn.fetch(
            "SELECT action_key FROM dead_letters WHERE action_key IS NOT NULL")}
    finally:
        await conn.close()
    terminal = []
    for wf, out in outcomes.items():
        if isinstance(out, str):
            continue
        if out.state not in TERMINAL_STATES:
            terminal.append(f"{wf}: ended {out.state.value}, not terminal")
        elif wf in rows and rows[wf] != out.state.value:
            terminal.append(f"{wf}: workflow says {out.state.value}, PostgreSQL {rows[wf]}")
    found["one_terminal_state_per_event"] = terminal
    # The schedule sends only well-formed, signed events: a quarantine means intake refused one
    # it should have taken (a run where every event is quarantined sends nothing and would
    # otherwise pass every other check).
    found["no_valid_event_quarantined"] = [
        f"{wf}: quarantined {out.reason_code}" for wf, out in outcomes.items()
        if isinstance(out, FinalOutcome) and out.state == EventState.QUARANTINED]
    # Nor a retired schema version: DEAD_LETTERED can only be a step that failed for good (the
    # customer record or the send, workflows/failures.py), which no fault of the schedule should
    # cause; no_approval_on_record is the store losing an approval the workflow holds
    # (docs/receipts.md, lost tasks).
    found["no_send_dead_lettered"] = [
        f"{wf}: dead-lettered {out.reason_code}" for wf, out in outcomes.items()
        if isinstance(out, FinalOutcome) and out.state == EventState.DEAD_LETTERED]

    agree = []
    held = set(per_key)
    for r in receipts:
        key, status = r["action_key"], r["status"]
        if status in ("PENDING", "UNKNOWN") and key not in dead:
            # UNKNOWN with a dead letter is the designed end of a write nobody can verify:
            # an operator decides; without one, the write was forgotten.
            agree.append(f"{key}: receipt left {status} with no dead letter")
        elif status == "SUCCEEDED" and key not in held:
            agree.append(f"{key}: receipt SUCCEEDED, no message at the target")
        elif status != "SUCCEEDED" and key in held:
            agree.append(f"{key}: receipt {status}, yet the target holds a message")
    succeeded = {r["action_key"] for r in receipts if r["status"] == "SUCCEEDED"}
    agree += [f"{key}: message at the target, no SUCCEEDED receipt" for key in held - succeeded]
    found["receipts_agree_with_target"] = agree

    markers = {e.first_name for e in plan.events} | {e.pet_name for e in plan.events}
    leaks = [] if any(log.exists() and log.stat().st_size for log in logs) else [
        "no worker log to look in: this check would prove nothing"]
    for log in logs:
        text = log.read_text(errors="replace") if log.exists() else ""
        leaks += [f"{log.name}: {m}" for m in sorted(markers) if m in text]
    found["no_personal_data_in_logs"] = leaks
    return found


def summary(found: dict[str, list[str]]) -> dict[str, Any]:
    return {name: ("held" if not bad else bad[:10]) for name, bad in found.items()}
