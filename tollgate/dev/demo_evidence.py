"""What the demo's printed outcomes rest on, read back from the stand-in and PostgreSQL.

A final state alone proves little: an approved event that met no 504 also ends SUCCEEDED with one
message, and a revoked customer's run could be drafted before it stopped. So the demo checks the
three things it claims happened, each from the place that records it, and names any that did not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from contracts import EventState, FinalOutcome

#: The states a write that met a 504-after-write passes through before the lookup settles it.
RECOVERY_PATH = (EventState.UNKNOWN_WRITE.value, EventState.RECONCILING.value,
                 EventState.SUCCEEDED.value)


@dataclass(frozen=True)
class Evidence:
    """What the stand-in and PostgreSQL recorded for the approved and the revoked event."""

    #: Faults still queued at the messaging stand-in (``FaultQueue.pending()``).
    pending_faults: list[dict[str, Any]]
    #: POSTs the target received with the approved action's key.
    posts_for_key: int
    #: ``state_transitions.to_state`` of the approved event, in order.
    approved_path: list[str]
    approved: FinalOutcome
    #: ``drafts`` rows of the revoked customer's event.
    revoked_drafts: int
    revoked: FinalOutcome


def missing(evidence: Evidence) -> list[str]:
    """One line per claim of the demo that the records do not bear out (empty: all did)."""
    problems = []
    if any(f["kind"] == "fail_after_write" for f in evidence.pending_faults):
        problems.append("the 504-after-write fault never fired: no send met it")
    elif evidence.posts_for_key != 1:
        problems.append(f"the approved action was POSTed {evidence.posts_for_key} times, "
                        "expected once (the 504'd write, then no resend)")
    receipt = evidence.approved.receipt
    steps = [s for s in evidence.approved_path if s in RECOVERY_PATH]
    if (evidence.approved.reason_code != "found_at_target" or steps[-3:] != list(RECOVERY_PATH)
            or receipt is None or receipt.status != "SUCCEEDED"):
        problems.append(
            "the lookup did not find the write: the approved event went "
            f"{' -> '.join(evidence.approved_path) or 'nowhere'} "
            f"({evidence.approved.reason_code or 'no reason'}), not UNKNOWN_WRITE -> "
            "RECONCILING -> SUCCEEDED found_at_target")
    if evidence.revoked_drafts or evidence.revoked.state != EventState.STOPPED:
        problems.append(f"the revoked customer's event has {evidence.revoked_drafts} draft(s) "
                        f"and ended {evidence.revoked.state.value}, expected no draft, STOPPED")
    return problems


async def gather(dsn: str, *, pending_faults: list[dict[str, Any]], posts_for_key: int,
                 approved: FinalOutcome, revoked: FinalOutcome) -> Evidence:
    """Reads the approved event's transitions and the revoked event's drafts."""
    import asyncpg

    conn = await asyncpg.connect(dsn)
    try:
        path = [r["to_state"] for r in await conn.fetch(
            "SELECT to_state FROM state_transitions WHERE workflow_id = $1 ORDER BY seq",
            approved.workflow_id)]
        drafts = int(await conn.fetchval("SELECT count(*) FROM drafts WHERE workflow_id = $1",
                                         revoked.workflow_id))
    finally:
        await conn.close()
    return Evidence(pending_faults=pending_faults, posts_for_key=posts_for_key,
                    approved_path=path, approved=approved, revoked_drafts=drafts, revoked=revoked)


@dataclass(frozen=True)
class Confirmation:
    """The fan-out scene's order confirmation (``demo_fanout``), as the records show it."""

    #: The notify consumer's child ProcessEvent's final outcome.
    outcome: FinalOutcome
    #: POSTs the messaging stand-in received with the confirmation's action key, before the
    #: order desk approved and after the run ended.
    posts_before_approval: int
    posts: int
    #: What publishing the same order a second time answered.
    republished: str
    #: ``events`` rows correlated with the order's event id (children handed the control core).
    children: int
    #: Consumers with a dead letter for the order.
    dead_letters: list[str]


def confirmation_missing(seen: Confirmation) -> list[str]:
    """One line per claim of the fan-out scene the records do not bear out."""
    problems = []
    if seen.posts_before_approval:
        problems.append(f"the confirmation was POSTed {seen.posts_before_approval} times "
                        "before the order desk approved it")
    receipt = seen.outcome.receipt
    if (seen.outcome.state != EventState.SUCCEEDED or receipt is None
            or receipt.status != "SUCCEEDED" or seen.posts != 1):
        problems.append(f"the confirmation ended {seen.outcome.state.value} with {seen.posts} "
                        "POST(s), expected SUCCEEDED with one message and its receipt")
    if seen.republished != "duplicate" or seen.children != 1:
        problems.append(f"publishing the order again gave {seen.republished} and "
                        f"{seen.children} children, expected duplicate and one")
    if seen.dead_letters != ["analytics"]:
        problems.append(f"dead letters for {seen.dead_letters}, expected analytics alone")
    return problems
