"""The reviewers of a chaos run: each event is decided as its plan says (approve, reject, or a
second reviewer racing the first the other way), through the same update the CLI sends."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from temporalio.client import Client

from contracts import ReviewDecision
from tollgate.chaos.schedule import EventPlan
from tollgate.ops.review_ticket import open_review
from tollgate.runtime.identity import issue_dev_token


async def review(client: Client, wf_id: str, e: EventPlan, *, tenant: str,
                 deadline_s: float, keys: Path) -> None:
    """Wait up to ``deadline_s`` for the run to ask for a review, then decide it as ``e.review``
    says; a run that ends first is left alone. Each reviewer signs with the dev key under
    ``keys`` (the stack's state folder), which the worker checks decisions against."""
    # describe (no worker needed) shows when the run waits and its ticket (issue 33).
    handle = client.get_workflow_handle(wf_id)
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        try:
            found = await open_review(handle)
        except Exception:
            await asyncio.sleep(0.5)
            continue
        if not found.running:
            return
        if found.ticket is not None:
            ticket = found.ticket
            break
        await asyncio.sleep(0.2)
    else:
        return

    def decision(kind: str, reviewer: str, role: str) -> ReviewDecision:
        return ReviewDecision(request_id=ticket.request_id, decision=kind,
                              reviewer=reviewer, role=role, reason="chaos run",
                              draft_version=ticket.draft_version, tenant_id=tenant,
                              token=issue_dev_token(keys, reviewer=reviewer, role=role,
                                                    tenant=tenant))

    calls = [decision("reject" if e.review == "reject" else "approve", "an.tran",
                      "care_lead")]
    if e.review == "race":  # a second reviewer decides the other way at the same moment
        calls.append(decision("reject", "bao.le", "reviewer"))
    await asyncio.gather(*(decide(client, wf_id, d) for d in calls), return_exceptions=True)


async def decide(client: Client, wf_id: str, d: ReviewDecision) -> None:
    for _ in range(30):
        try:
            await client.get_workflow_handle(wf_id).execute_update("review", d)
            return
        except Exception:
            await asyncio.sleep(1)
