"""How the bench hands one event to a pipeline and reads how it ended: Tollgate through its
own intake, a baseline through an update-with-start on its workflow, as the starter does. A
run's end is waited for with ``run_result`` (ADR 0083), so a close the server did not notify
to the result's long poll costs seconds, not the poll's 20 s, and is counted."""

from __future__ import annotations

import contextlib
from datetime import datetime
from typing import Any

from temporalio.client import Client, WithStartWorkflowOperation
from temporalio.common import (
    SearchAttributePair,
    TypedSearchAttributes,
    WorkflowIDConflictPolicy,
    WorkflowIDReusePolicy,
)
from temporalio.exceptions import WorkflowAlreadyStartedError

from contracts import EventState, FinalOutcome
from tollgate.bench.baseline import EVENT_TYPE_KEY, TENANT_KEY, BaselineWorkflow
from tollgate.bench.reviewer import TENANT
from tollgate.bench.variant import INTAKE, START, Variant, filler
from tollgate.bench.variants import PIPELINES
from tollgate.intake.submit import submit
from tollgate.runtime.run_end import run_result


def _started_with(variant: Variant) -> TypedSearchAttributes:
    """Tollgate's attributes at the start, for the variants that carry them or list by them."""
    pairs: list[SearchAttributePair[Any]] = []
    if variant.attrs or variant.listing:
        pairs.append(SearchAttributePair(TENANT_KEY, TENANT))
    if variant.attrs:
        pairs.append(SearchAttributePair(EVENT_TYPE_KEY, "CARE_DUE"))
    return TypedSearchAttributes(pairs)


async def submit_event(client: Client, task_queue: str, pipeline: str, wf_id: str,
                       raw: str) -> str:
    """The intake's answer to one event: ``accepted``, or ``duplicate`` when it was seen."""
    if pipeline == "tollgate":
        ack = await submit(client, raw, task_queue=task_queue)
        return ack.status
    baseline = PIPELINES[pipeline]
    start: WithStartWorkflowOperation[Any, str] = WithStartWorkflowOperation(
        baseline.workflow_type, raw + filler(baseline.variant.pad(START)), id=wf_id,
        task_queue=baseline.queue, result_type=str,
        search_attributes=_started_with(baseline.variant),
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
        id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE)
    pad = baseline.variant.pad(INTAKE)  # none: the update carries no payload, as before
    try:
        return await client.execute_update_with_start_workflow(
            BaselineWorkflow.intake, *([filler(pad)] if pad else []),
            start_workflow_operation=start)  # the same update on every baseline
    except WorkflowAlreadyStartedError:  # as the starter does: answer with the old result
        with contextlib.suppress(WorkflowAlreadyStartedError):
            await start.workflow_handle()  # the operation's own copy of the error, read
        # A closed run (the reuse policy refused the id): its poll answers at once.
        await client.get_workflow_handle(wf_id).result()
        return "duplicate"


async def event_outcome(client: Client, pipeline: str,
                        wf_id: str) -> tuple[str, datetime | None]:
    """The state an event's workflow ended in (a baseline's, when it ends, is SUCCEEDED), and
    the run's close time when the wait for it missed the close (``run_result``)."""
    if pipeline == "tollgate":
        out = await run_result(client.get_workflow_handle(wf_id, result_type=FinalOutcome))
        return out.value.state.value, out.missed_close_at
    end = await run_result(client.get_workflow_handle(wf_id))
    return EventState.SUCCEEDED.value, end.missed_close_at
