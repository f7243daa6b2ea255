"""The policy gate step of ProcessEventWorkflow: the pure gate (``policies.gate``) on counts a
local activity reads, and the hold while a tenant's review backlog is over its limit.
Deterministic like any workflow code."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from activities.review import ReviewActivities
    from contracts import DraftResult, EventRef, EventState, GateCounts, GateCountsRequest
    from contracts.policy import PolicySnapshot
    from contracts.search_attributes import gate_key
    from policies.gate import GateDecision, evaluate_gate
    from workflows import timeouts as t
    from workflows.holds import Hold


async def count_gate_inputs(ref: EventRef, policy: PolicySnapshot) -> GateCounts:
    """Sends today for this customer and the tenant's overdue reviews, as of now."""
    return await workflow.execute_local_activity_method(
        ReviewActivities.count_gate_inputs,
        GateCountsRequest(ref=ref, adapter=policy.rule.adapter, action=policy.rule.action,
                          as_of=workflow.now()),
        start_to_close_timeout=t.STORE_TIMEOUT, retry_policy=t.STORE_RETRY,
    )


async def pass_gate(
    ref: EventRef, policy: PolicySnapshot, draft: DraftResult, *,
    state: Callable[[], EventState], record: Callable[..., Awaitable[None]], hold: Hold,
    count: Callable[[], Awaitable[GateCounts]] | None = None,
) -> GateDecision | None:
    """The gate on fresh counts. While it says ``hold`` the event waits here
    (HELD_AT_GATE, written once through ``record``) and asks again when woken (a decided review
    of the tenant) or on the fallback timer: a hold never approves and never sends. None: the
    history budget is spent; the run continues as new and resumes here. ``count``: what reads
    the counts, when not ``count_gate_inputs`` (a new-shape run opens the review in the same
    local activity: ``workflows.fused.ReviewOpener``)."""
    draft_only = evaluate_gate(policy, draft)
    if draft_only.route == "stop":  # a refused or missing draft: final, nothing to count
        return draft_only
    while True:
        counts = await (count() if count is not None else count_gate_inputs(ref, policy))
        gate = evaluate_gate(policy, draft, sends_today=counts.sends_today,
                             overdue_reviews=counts.overdue_reviews)
        if gate.route != "hold":
            hold.release()
            return gate
        if state() != EventState.HELD_AT_GATE:
            await record([EventState.DRAFTED, EventState.HELD_AT_GATE],
                         f"{gate.reason_code}: the tenant's reviews past their SLA "
                         "reached the policy's limit; waiting at the gate", draft=draft)
        if await hold.wait([gate_key(ref.tenant_id)], t.GATE_HOLD_RECHECK, t.GATE_HOLD_RECHECK):
            return None
