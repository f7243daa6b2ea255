"""The triage domain inside a ProcessEventWorkflow run (issue 32, ADR 0044). Deterministic.

A ``MESSAGE_RECEIVED`` event takes the care reminder's seven steps; only two of them differ,
and each is chosen by the event type, which an event's history fixes from its first activity
result, so no history recorded before triage existed takes another path on replay:

- step 4 asks the triage activity (``triage_version``) instead of the draft activity;
- step 5: when the policy matrix says the proposal may be auto-routed (``may_auto_route``: a
  clean proposal of a listed intent with no reply draft), ``auto_route`` records the policy's
  approval and sends, with no reviewer; anything else goes through the same gate and review as
  a care reminder, and a reply draft always does.

The send is the care reminder's too (``SendingLedger._execute``): an action token over the
approved assignment, the kill switch, the receipt first, one keyed call to the helpdesk, the
reconciler after an unknown write.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from activities.triage import TriageActivities
    from contracts import (
        DraftRequest,
        DraftResult,
        EventRef,
        EventState,
        FinalOutcome,
        IntakeRequest,
        ReviewDecision,
    )
    from contracts.contacts import TenantContact
    from contracts.policy import PolicySnapshot
    from contracts.triage import MESSAGE_RECEIVED
    from policies.gate import evaluate_gate
    from policies.triage import may_auto_route
    from policies.triage_prompt import TRIAGE_PROMPT_VERSION
    from workflows import timeouts as t
    from workflows.gate import count_gate_inputs

if TYPE_CHECKING:
    from workflows.sending import SendingLedger

#: The model worker's queue (``workflows.process_event.DRAFT_TASK_QUEUE``): the triage activity
#: runs beside the draft activity, on the worker that holds the model key and nothing else.
MODEL_TASK_QUEUE = "tollgate-draft"
#: Who approved an auto-routed assignment, as the decision row and the audit show it. No person
#: holds this role: a reviewer's decision naming it is refused (it is no approver role).
AUTO_REVIEWER = "policy"
AUTO_ROLE = "auto_route"


def is_triage(ref: EventRef) -> bool:
    return ref.event_type == MESSAGE_RECEIVED


async def triage_version(ref: EventRef, policy: PolicySnapshot, fields: dict[str, str],
                         note: str | None, version: int,
                         contacts: tuple[TenantContact, ...] = (),
                         notes: tuple[str, ...] = ()) -> DraftResult:
    """Step 4 for a triage event: one proposal, validated (raises ``ActivityError`` as the
    draft activity does when every attempt failed). ``contacts``: the tenant's own contact
    points, which a reply may name (ADR 0039). ``notes``: every request-info question of the
    review so far, oldest first (``ReviewDesk.asked``); ``note`` is the latest. Only the
    activity's input grows with them: the commands are the same, so no patch is needed."""
    result: DraftResult = await workflow.execute_activity_method(
        TriageActivities.triage_message,
        DraftRequest(ref=ref, context=fields, policy_version=policy.version,
                     prompt_version=TRIAGE_PROMPT_VERSION, version=version,
                     reviewer_note=note, reviewer_notes=notes, rule=policy.rule,
                     tenant_contacts=contacts),
        task_queue=MODEL_TASK_QUEUE,
        start_to_close_timeout=t.DRAFT_TIMEOUT, retry_policy=t.DRAFT_RETRY,
        summary=f"triage version {version}: model proposes, validator checks",
    )
    return result


def auto_routable(ref: EventRef, policy: PolicySnapshot, draft: DraftResult) -> bool:
    """Pure: whether the policy assigns this proposal with no reviewer (never a care event)."""
    return is_triage(ref) and may_auto_route(policy.rule, draft)


async def auto_route(run: SendingLedger, request: IntakeRequest, ref: EventRef,
                     policy: PolicySnapshot, draft: DraftResult) -> FinalOutcome:
    """Assign with the policy's approval on record: the daily limit still applies (a stop), the
    review backlog does not (nothing waits for a reviewer). The approval is a decision row like
    a reviewer's, so the send step's checks (approval on record, action token) are unchanged."""
    assert draft.triage is not None
    counts = await count_gate_inputs(ref, policy)
    gate = evaluate_gate(policy, draft, sends_today=counts.sends_today)
    if gate.route == "stop":
        return await run._finish(EventState.STOPPED, gate.reason_code, draft=draft)
    why = (f"auto-routed by policy {policy.version}: intent {draft.triage.intent.value} "
           f"to {draft.triage.route.value}, no reply")
    decision = ReviewDecision(request_id=str(workflow.uuid4()), decision="approve",
                              reviewer=AUTO_REVIEWER, role=AUTO_ROLE, reason=why,
                              draft_version=draft.version, tenant_id=ref.tenant_id)
    await run._record([EventState.DRAFTED, EventState.APPROVED], why, draft=draft,
                      decision=decision)
    return await run._execute(request, ref, policy, draft, decision)
