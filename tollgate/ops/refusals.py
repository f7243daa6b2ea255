"""Audit of the decisions a workflow's update validator refused (issue 26 item 3).

A refused update never reaches the run's history, so the edge that sent it (the review HTTP
service, the CLI) records it here, in ``review_decisions`` beside the refusals the workflow
records itself, with the validator's reason code (``policies.gate.AuthorizationReason``,
``malformed_decision``, ``review_closed``, the token codes of ``policies.decision_identity``).
"""

from __future__ import annotations

import uuid

import asyncpg

from adapters.postgres.store import PostgresStore
from contracts import ReviewDecision


async def record_validator_refusal(pool: asyncpg.Pool, workflow_id: str,
                                   decision: ReviewDecision, refusal_code: str) -> bool:
    """Record one refused attempt (each call its own row). False when the event is unknown."""
    return await PostgresStore(pool).record_refused_by_validator(
        workflow_id=workflow_id, decision=decision.model_copy(update={"token": None}),
        refusal_code=refusal_code, decision_key=f"{workflow_id}#v{uuid.uuid4().hex[:16]}")
